package taskfile

import (
	"reflect"
	"testing"
)

// A follow-up's thread is its parent's turns and the parent itself, on
// the account and in the chat of the parent's last send.
func TestThreadOf(t *testing.T) {
	first := &Task{TaskID: "a", Content: "draft", Result: "long", Account: "a1",
		Send: &SendRecord{State: SendSent, Account: "a2", Conversation: "https://chat.example/c/1"}}
	th := ThreadOf(first)
	want := &Thread{Account: "a2", Conversation: "https://chat.example/c/1", Turns: []Turn{{TaskID: "a", Content: "draft", Result: "long"}}}
	if !reflect.DeepEqual(th, want) {
		t.Fatalf("ThreadOf(first) = %+v, want %+v", th, want)
	}
	second := &Task{TaskID: "b", Content: "shorter", Result: "short", Account: "a2", Thread: th}
	if got := ThreadOf(second); len(got.Turns) != 2 || got.Turns[1].TaskID != "b" || got.Account != "a2" || got.Conversation != "" {
		t.Errorf("ThreadOf(second) = %+v: want both turns on a2, no chat (an API task's)", got)
	}
	if got, want := TranscriptText(th.Turns, "title?"), "Here is our conversation so far; continue it.\n\nUser:\ndraft\n\nAssistant:\nlong\n\nUser:\ntitle?"; got != want {
		t.Errorf("TranscriptText = %q, want %q", got, want)
	}
}
