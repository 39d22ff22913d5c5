package taskfile

import (
	"strings"
	"testing"
)

// TestSchema_Check: the answer's JSON is the whole answer or its one
// fenced block; the first mismatch is named with where it is.
func TestSchema_Check(t *testing.T) {
	const tags = `{"type":"object","required":["title"],"properties":{"title":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}}}`
	for _, c := range []struct {
		name, schema, answer, want, err string
	}{
		{"whole answer", tags, ` {"title": "a", "tags": ["x"]} `, `{"title": "a", "tags": ["x"]}`, ""},
		{"fenced with prose", tags, "Sure:\n\n```json\n{\"title\": \"a\"}\n```\n\nDone.", `{"title": "a"}`, ""},
		{"fence without a language", tags, "```\n{\"title\": \"a\"}\n```", `{"title": "a"}`, ""},
		{"two blocks", tags, "```json\n{\"title\": \"a\"}\n```\n```json\n{\"title\": \"b\"}\n```", "", "2 JSON blocks"},
		{"no JSON", tags, "A title: a", "", "holds no JSON"},
		{"wrong item type", tags, `{"title": "a", "tags": ["x", 7]}`, "", "at /tags/1: got number, want string"},
		{"missing property", tags, `{"tags": []}`, "", "at /: missing property 'title'"},
		{"read as Markdown", tags, `{"title": "a\\\\b \_x\_", "tags": \["x"\]}`, `{"title": "a\\b _x_", "tags": ["x"]}`, ""},
		{"escapes that stay", tags, `{"title": "a\"b"}`, `{"title": "a\"b"}`, ""},
		{"object", SchemaObject, `{"x": 1}`, `{"x": 1}`, ""},
		{"object refuses an array", SchemaObject, `[1]`, "", "not an object"},
	} {
		s, err := CompileSchema(SchemaText(c.schema))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := s.Check(c.answer)
		if got != c.want || (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %q, %v; want %q, %q", c.name, got, err, c.want, c.err)
		}
	}
}

// TestCompileSchema: YAML mappings become JSON; a schema that does not
// compile, or reaches outside itself, is refused with a one-line reason.
func TestCompileSchema(t *testing.T) {
	task, err := DecodeTask([]byte("taskId: a\nmodel: m\ncontent: c\nschema:\n  type: object\n  properties:\n    n: {type: integer}\n"))
	if err != nil || task.Schema != `{"properties":{"n":{"type":"integer"}},"type":"object"}` {
		t.Fatalf("decoded %q, %v", task.Schema, err)
	}
	data, err := task.Encode()
	if err != nil {
		t.Fatal(err)
	}
	again, err := DecodeTask(data)
	if err != nil || again.Schema != task.Schema {
		t.Fatalf("round trip: %q, %v", again.Schema, err)
	}
	for schema, want := range map[string]string{
		`{"type": 12}`:                           "schema: ",
		`not json`:                               "schema: not JSON",
		`[1, 2]`:                                 "want a JSON Schema object",
		`{"$ref": "file:///etc/passwd"}`:         "may refer only to itself",
		`{"$ref": "https://example.com/s.json"}`: "may refer only to itself",
		`{"$defs": {"a": {"type": "string"}}, "$ref": "#/$defs/a"}`: "",
	} {
		_, err := CompileSchema(SchemaText(schema))
		if (want == "") != (err == nil) || err != nil && (!strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n")) {
			t.Errorf("%s: %v; want %q", schema, err, want)
		}
	}
}

// FuzzCompileSchema: a schema from a task file compiles or is refused
// with one line, never a panic; a compiled one checks any answer.
func FuzzCompileSchema(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"string"}}}`, `{"a":"x"}`)
	f.Add(`object`, "```json\n{}\n```")
	f.Add(`{"$ref":"#/definitions/x","definitions":{"x":{"enum":[1]}}}`, `1`)
	f.Fuzz(func(t *testing.T, schema, answer string) {
		s, err := CompileSchema(SchemaText(schema))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a two-line refusal: %q", err)
			}
			return
		}
		if _, err := s.Check(answer); err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("a two-line mismatch: %q", err)
		}
	})
}
