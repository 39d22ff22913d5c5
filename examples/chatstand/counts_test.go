package chatstand

import (
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/testkit"
)

// The stand-in counts the real rule per account and in total: two accounts
// may generate at once, one account may not.
func TestServer_MaxPerAccount(t *testing.T) {
	s := start(t, Options{Scale: 0.01})
	first := make(chan int, 1)
	go func() {
		code, _ := generate(t, s, "a1", "", "[[duration=20s]] long")
		first <- code
	}()
	testkit.Wait(t, "a1's generation to start", 5*time.Second, func() bool { return s.Active() == 1 })
	if code, _ := generate(t, s, "a2", "", "[[duration=1s]] other account"); code != 200 {
		t.Fatalf("a2 while a1 generates: %d", code)
	}
	if code, _ := generate(t, s, "a1", "", "second of a1"); code == 200 {
		t.Fatal("a second generation of a1 was admitted")
	}
	<-first
	per := s.MaxPerAccount()
	if per["a1"] != 2 || per["a2"] != 1 || s.MaxTotal() != 2 {
		t.Fatalf("per account %v total %d, want a1 2 (the refused one counts), a2 1, total 2", per, s.MaxTotal())
	}
	if s.GenerationsBy("a1") != 1 || s.GenerationsBy("a2") != 1 {
		t.Fatalf("generations a1 %d a2 %d, want 1 and 1", s.GenerationsBy("a1"), s.GenerationsBy("a2"))
	}
}
