package browser

import (
	"context"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/examples/chatstand"
)

func TestExecutor_Execute_One(t *testing.T) {
	e := newEnv(t, envOpts{})
	content := "[[duration=20s]] write a short poem"
	job, log := e.job(t, "chat-web", "", content)
	start := time.Now()
	res, err := e.exec.Execute(context.Background(), job)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("Execute: %v\nlog:\n%s", err, log)
	}
	if want := chatstand.AnswerFor(content); res.Text != want {
		t.Fatalf("result %q, want %q", res.Text, want)
	}
	t.Logf("launch + one answer (%s scaled) + close: %s\nlog:\n%s", 200*time.Millisecond, took, log)
}
