package taskfile

import "strings"

// Thread is the conversation a follow-up (followUp:) continues, as its
// claim found it in the parent's record.
type Thread struct {
	// Account and Conversation (web) are the account whose chat it is and
	// the chat's URL: the follow-up is typed there as the next message.
	Account      string `yaml:"account,omitempty"`
	Conversation string `yaml:"conversation,omitempty"`
	// Turns are the earlier turns, oldest first: each parent's content
	// (as sent) and result, walking the followUp chain.
	Turns []Turn `yaml:"turns,omitempty"`
}

// Turn is one earlier exchange of a conversation.
type Turn struct {
	TaskID  string `yaml:"taskId"`
	Content string `yaml:"content"`
	Result  string `yaml:"result"`
}

// ThreadOf is the thread that continues parent's conversation: parent's
// own turns and parent itself, on the account and in the chat its last
// send went to.
func ThreadOf(parent *Task) *Thread {
	th := &Thread{Account: parent.Account}
	if parent.Thread != nil {
		th.Turns = append(th.Turns, parent.Thread.Turns...)
	}
	th.Turns = append(th.Turns, Turn{TaskID: parent.TaskID, Content: parent.Content, Result: parent.Result})
	if s := parent.Send; s != nil {
		th.Account, th.Conversation = s.Account, s.Conversation
	}
	return th
}

// TranscriptText is the first message of a new chat that carries the
// earlier turns, then the new message: what a follow-up sends when its
// chat is gone (followUpFallback: transcript), and what the front door's
// transcript chat sends.
func TranscriptText(turns []Turn, content string) string {
	var b strings.Builder
	b.WriteString("Here is our conversation so far; continue it.\n\n")
	for _, t := range turns {
		b.WriteString("User:\n" + t.Content + "\n\nAssistant:\n" + t.Result + "\n\n")
	}
	b.WriteString("User:\n" + content)
	return b.String()
}

// Filled reports whether a claim filled the task from its parents (its
// content from their results, its thread from its followUp): it then no
// longer waits for them, and is not filled again.
func (t *Task) Filled() bool { return t.Template != "" || t.Thread != nil }
