package tokens

import (
	"strings"
	"sync"
	"testing"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestTokens_Count(t *testing.T) {
	tests := []struct {
		name, enc, text string
		want            int
		wantErr         bool
	}{
		// OpenAI's cookbook ("How to count tokens with tiktoken") gives
		// "tiktoken is great!" as 6 tokens in both vocabularies.
		{"cookbook o200k", "o200k_base", "tiktoken is great!", 6, false},
		{"cookbook cl100k", "cl100k_base", "tiktoken is great!", 6, false},
		{"default is o200k", "", "tiktoken is great!", 6, false},
		{"empty", "o200k_base", "", 0, false},
		{"special token's text is text", "o200k_base", "<|endoftext|>", 7, false},
		{"unknown vocabulary", "p50k_base", "x", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := Count(tt.enc, tt.text)
			if (err != nil) != tt.wantErr || n != tt.want {
				t.Errorf("Count(%q, %q) = %d, %v; want %d (error %v)", tt.enc, tt.text, n, err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestTokens_CountVocabularies: the two vocabularies really differ on
// Chinese text (a tokenizer key that changed nothing would pass the
// cookbook rows).
func TestTokens_CountVocabularies(t *testing.T) {
	const zh = "结构化输出：每篇文章的标题、摘要、标签和分类。"
	a, err1 := Count("o200k_base", zh)
	b, err2 := Count("cl100k_base", zh)
	if err1 != nil || err2 != nil || a == 0 || a >= b {
		t.Errorf("o200k %d (%v), cl100k %d (%v): want o200k fewer", a, err1, b, err2)
	}
}

func TestTokens_Estimate(t *testing.T) {
	u, err := Estimate("", []string{"tiktoken is great!", "", "tiktoken is great!"}, "tiktoken is great!", "tiktoken is great!")
	want := taskfile.Usage{PromptTokens: 12, CompletionTokens: 12, ReasoningTokens: 6, Estimated: true}
	if err != nil || u != want {
		t.Errorf("Estimate = %+v, %v; want %+v", u, err, want)
	}
	if _, err := Estimate("nope", nil, "x", ""); err == nil {
		t.Error("Estimate with an unknown vocabulary: no error")
	}
}

// TestTokens_CountConcurrent: sessions finish at once; -race checks the
// shared encodings.
func TestTokens_CountConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			enc := []string{"o200k_base", "cl100k_base"}[i%2]
			if n, err := Count(enc, "tiktoken is great!"); n != 6 || err != nil {
				t.Errorf("%s: %d, %v", enc, n, err)
			}
		})
	}
	wg.Wait()
}

// BenchmarkTokens_Count: a 10 KB answer of mixed English and Chinese, the
// cost a web answer's estimate adds to its attempt.
func BenchmarkTokens_Count(b *testing.B) {
	text := strings.Repeat("A summary of the article: 绿茶礼盒，限量 500 套. Tags: tea, gift, spring. ", 128)
	if _, err := Count("o200k_base", text); err != nil { // loads the vocabulary before the clock runs
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Count("o200k_base", text); err != nil {
			b.Fatal(err)
		}
	}
}
