//go:build linux

package doors

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/spoolgate/spoolgate/examples/chatstand"
)

// Issue 51's door acceptance with the official Go SDK: a client that
// appends the assistant's reply and a new user message gets the next turn
// of the same chat, on the web model, three turns deep; a made-up earlier
// turn is refused with the documented 400.
func TestE2E_Door_MultiTurn(t *testing.T) {
	t.Parallel()
	r := newDoorRig(t, 0.01, "")
	d := r.startDoor("turns")
	defer d.Stop()
	ctx := context.Background()
	c := r.sdk(doorToken)
	p := openai.ChatCompletionNewParams{Model: "web-door"}
	var chats []string
	for i, ask := range []string{"[[duration=30s]] Draft a tagline for a tea shop", "[[duration=30s]] Shorter", "[[duration=30s]] Now in French"} {
		p.Messages = append(p.Messages, openai.UserMessage(ask))
		res, err := c.Chat.Completions.New(ctx, p)
		if err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
		msg := res.Choices[0].Message
		if msg.Content != chatstand.AnswerFor(ask) {
			t.Fatalf("turn %d: %q, want %q", i+1, msg.Content, chatstand.AnswerFor(ask))
		}
		p.Messages = append(p.Messages, msg.ToParam()) // as a chat client keeps the conversation
		for _, m := range r.web.Received() {
			if m.Content == ask {
				chats = append(chats, m.Conversation)
			}
		}
	}
	if len(chats) != 3 || chats[0] == "" || chats[1] != chats[0] || chats[2] != chats[0] {
		t.Errorf("the three turns went to chats %q, want one chat, each once", chats)
	}
	if conv, ok := r.web.Conversation(chats[0]); !ok || len(conv.Turns) != 3 {
		t.Errorf("the chat holds %+v, want the three turns", conv)
	}
	// An assistant turn spoolgate never answered: the documented 400.
	forged := openai.ChatCompletionNewParams{Model: "web-door", Messages: []openai.ChatCompletionMessageParamUnion{
		openai.UserMessage("Draft a tagline"), openai.AssistantMessage("an answer nobody gave"), openai.UserMessage("Shorter")}}
	_, err := c.Chat.Completions.New(ctx, forged)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Code != "conversation_not_found" ||
		!strings.Contains(apiErr.Message, "not a conversation this token had") {
		t.Errorf("a made-up earlier turn: %v, want 400 conversation_not_found", err)
	}
}
