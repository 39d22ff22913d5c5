// Package tokens counts a web answer's tokens with a BPE tokenizer whose
// vocabularies are compiled in (OpenAI's o200k_base and cl100k_base), for
// the usage a chat page never reports: an estimate, marked as one.
package tokens

import (
	"fmt"
	"sync"

	tiktoken "github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The vocabularies come from the loader's embedded files: tiktoken-go's
// own loader would download them at first use, which a daemon on a
// closed network cannot, and which would make a count depend on a host
// nobody here runs. Set once, before any encoding is read.
var setLoader = sync.OnceFunc(func() { tiktoken.SetBpeLoader(loader.NewOfflineLoader()) })

var (
	mu   sync.Mutex
	encs = map[string]*tiktoken.Tiktoken{} // loaded once per process: ~0.2 s each
)

func encoding(name string) (*tiktoken.Tiktoken, error) {
	if name == "" {
		name = config.TokenizerO200k
	}
	if name != config.TokenizerO200k && name != config.TokenizerCl100k {
		return nil, fmt.Errorf("tokenizer %q is not %s or %s", name, config.TokenizerO200k, config.TokenizerCl100k)
	}
	setLoader()
	mu.Lock()
	defer mu.Unlock()
	if e, ok := encs[name]; ok {
		return e, nil
	}
	e, err := tiktoken.GetEncoding(name)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", name, err)
	}
	encs[name] = e
	return e, nil
}

// Count is text's tokens in the named vocabulary ("" is o200k_base).
// Special tokens' text ("<|endoftext|>") counts as the text it is: an
// answer may quote one.
func Count(name, text string) (int, error) {
	if text == "" {
		return 0, nil
	}
	e, err := encoding(name)
	if err != nil {
		return 0, err
	}
	return len(e.EncodeOrdinary(text)), nil
}

// Estimate is a web answer's usage: prompt the text sent, answer and
// reasoning what the page gave back. As an API counts them, reasoning
// tokens are part of the completion's and also counted apart.
func Estimate(name string, prompt []string, answer, reasoning string) (taskfile.Usage, error) {
	u := taskfile.Usage{Estimated: true}
	for _, p := range prompt {
		n, err := Count(name, p)
		if err != nil {
			return taskfile.Usage{}, err
		}
		u.PromptTokens += n
	}
	a, err := Count(name, answer)
	if err != nil {
		return taskfile.Usage{}, err
	}
	r, err := Count(name, reasoning)
	if err != nil {
		return taskfile.Usage{}, err
	}
	u.CompletionTokens, u.ReasoningTokens = a+r, r
	return u, nil
}
