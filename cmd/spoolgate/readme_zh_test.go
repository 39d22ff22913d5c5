package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeZH checks the Chinese quick start against the product: it is
// linked from the top of README.md, its relative links name files that
// exist, and every `spoolgate COMMAND` it shows is a command spoolgate has.
func TestReadmeZH(t *testing.T) {
	root := filepath.Join("..", "..")
	en, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	head := strings.Join(strings.SplitN(string(en), "\n", 6)[:5], "\n")
	if !strings.Contains(head, "(README.zh-CN.md)") {
		t.Errorf("README.md does not link README.zh-CN.md in its first lines:\n%s", head)
	}
	zh, err := os.ReadFile(filepath.Join(root, "README.zh-CN.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\]\(([^)#:]+)\)`).FindAllStringSubmatch(string(zh), -1) {
		if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
			t.Errorf("README.zh-CN.md links %s: %v", m[1], err)
		}
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
			t.Errorf("README.zh-CN.md shows `spoolgate %s`, which is not a command", name)
		}
	}
	for _, want := range []string{"run", "submit", "status", "login", "check", "service", "retry"} {
		if !seen[want] {
			t.Errorf("README.zh-CN.md never shows `spoolgate %s`", want)
		}
	}
}
