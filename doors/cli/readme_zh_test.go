package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeZH checks the Chinese operator guide against the product: it is
// linked from the top of README.md, and every `spoolgate COMMAND` it shows
// is a command spoolgate has (internal/mdlinks checks its links).
func TestReadmeZH(t *testing.T) {
	root := filepath.Join("..", "..")
	en, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	head := strings.Join(strings.SplitN(string(en), "\n", 6)[:5], "\n")
	if !strings.Contains(head, "(docs/operators.zh-CN.md)") {
		t.Errorf("README.md does not link docs/operators.zh-CN.md in its first lines:\n%s", head)
	}
	zh, err := os.ReadFile(filepath.Join(root, "docs", "operators.zh-CN.md"))
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, c := range commands {
		known[c.name] = true
	}
	pending := map[string]bool{"help": true} // built in, not registered
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)spoolgate ([a-z]+)\b`).FindAllStringSubmatch(string(zh), -1) {
		name := m[1]
		seen[name] = true
		if !known[name] && !pending[name] {
			t.Errorf("docs/operators.zh-CN.md shows `spoolgate %s`, which is not a command", name)
		}
	}
	for _, want := range []string{"run", "submit", "status", "login", "check", "service", "retry"} {
		if !seen[want] {
			t.Errorf("docs/operators.zh-CN.md never shows `spoolgate %s`", want)
		}
	}
}
