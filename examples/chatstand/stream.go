package chatstand

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"
)

// plan is how one response plays out: these words, one every step; then,
// for `[[hang]]`, nothing more until the client leaves.
type plan struct {
	words   []string
	step    time.Duration
	hang    bool
	nostart bool
	cont    bool     // a continuation: its first word follows a space too
	rest    []string // `[[cut=N]]`: the words a "Continue generating" plays
}

// planFor makes the plan of a request: a new message's answer, or the
// rest of an earlier one. It reports false for an unknown continuation.
func (s *Server) planFor(req chatRequest) (plan, bool) {
	if req.Continue != "" {
		s.mu.Lock()
		rest, ok := s.conts[req.Continue]
		delete(s.conts, req.Continue)
		s.mu.Unlock()
		if !ok {
			return plan{}, false
		}
		words := strings.Fields(rest)
		return plan{words: words, cont: true, step: s.scaled(DefaultDuration) / time.Duration(max(len(words), 1))}, true
	}
	return s.planOf(req.Content), true
}

func (s *Server) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * s.opts.Scale)
}

func (s *Server) planOf(content string) plan {
	d := parseDirectives(content)
	total := DefaultDuration
	if d.duration > 0 {
		total = d.duration
	}
	var words []string
	if !d.empty {
		words = strings.Fields(AnswerFor(content))
	}
	p := plan{hang: d.hang, nostart: d.nostart}
	if d.cut > 0 && d.cut < len(words) {
		p.rest = words[d.cut:]
		words = words[:d.cut]
	}
	p.words = words
	steps := max(len(words), 1)
	if d.hang {
		steps = max(steps, 2)
	}
	p.step = s.scaled(total) / time.Duration(steps)
	return p
}

// keepRest stores the rest of a cut answer and returns its token.
func (s *Server) keepRest(rest []string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	tok := hex.EncodeToString(b)
	s.mu.Lock()
	s.conts[tok] = strings.Join(rest, " ")
	s.mu.Unlock()
	return tok
}

// stream emits the answer to content word by word, spread over the scaled
// duration; `[[hang]]` emits the first word and then waits for the client
// to leave. It reports whether the whole answer was emitted.
func (s *Server) stream(ctx context.Context, content string, emit func(string)) bool {
	return s.play(ctx, s.planOf(content), emit)
}

// play emits p's words with a space before each but the first of a new
// answer (a continuation's first word gets one too, so the page's text
// reads as one answer), and reports whether it emitted them all.
func (s *Server) play(ctx context.Context, p plan, emit func(string)) bool {
	steps := max(len(p.words), 1)
	if p.hang {
		steps = max(steps, 2) // the first word, then nothing more
	}
	// Each word is due at start + (i+1)·step, not step after the last one
	// came: an answer then takes its duration plus one timer's lateness,
	// not plus every step's (which a loaded machine stretches), and the
	// bench's offline figures, made from the durations alone, compare.
	start := time.Now()
	due := func(i int) time.Duration { return time.Until(start.Add(time.Duration(i+1) * p.step)) }
	t := time.NewTimer(due(0))
	defer t.Stop()
	for i := 0; i < steps; i++ {
		if p.hang && i == 1 {
			select {
			case <-ctx.Done():
			case <-s.done:
			}
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-s.done:
			return false
		case <-t.C:
		}
		t.Reset(due(i + 1))
		if i < len(p.words) {
			if i > 0 || p.cont {
				emit(" " + p.words[i])
			} else {
				emit(p.words[i])
			}
		}
	}
	return true
}
