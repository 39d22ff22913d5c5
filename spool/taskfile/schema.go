package taskfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"gopkg.in/yaml.v3"
)

// Structured output (issue 52): a task's `schema:` asks for a JSON answer.
// It is a JSON Schema, written inline in the task file as YAML or as JSON
// text, or the word `object` (any JSON object: the door's json_object).
// The model is told the schema (Schema.Instruction); its answer's JSON,
// the whole answer or its one fenced JSON block, is checked with a
// well-kept JSON Schema library (santhosh-tekuri/jsonschema) and kept as
// the result (resultFormat: json). An answer that does not match is
// retried with the first error told to the model, then fails as
// ClassSchema.

// SchemaObject is the schema that asks for any JSON object.
const SchemaObject = "object"

// ClassSchema: the model's answer did not match the task's schema.
const ClassSchema ErrorClass = "schema"

// FormatJSON is the resultFormat of an answer checked against a schema.
const FormatJSON = "json"

// SchemaText is a task's schema as JSON text (or SchemaObject). In a
// task file it may be written as a YAML mapping, which is kept as JSON.
type SchemaText string

// UnmarshalYAML takes a mapping (the schema written in YAML) as its
// JSON, and a string as written.
func (s *SchemaText) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*s = SchemaText(strings.TrimSpace(n.Value))
		return nil
	case yaml.MappingNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("schema: %w", err)
		}
		*s = SchemaText(b)
		return nil
	}
	return errors.New("schema: want a JSON Schema (a mapping, or JSON text) or the word object")
}

// Schema is a compiled task schema.
type Schema struct {
	text string
	sch  *jsonschema.Schema // nil for SchemaObject
}

// noLoader refuses every $ref outside the schema itself: a task on the
// share must not make the daemon read a file or fetch an address.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s: a schema may refer only to itself", url)
}

// CompileSchema compiles a task's schema; the error is one line.
func CompileSchema(text SchemaText) (*Schema, error) {
	s := strings.TrimSpace(string(text))
	if s == SchemaObject {
		return &Schema{text: s}, nil
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
	if err != nil {
		return nil, fmt.Errorf("schema: not JSON: %s", OneLine(err.Error()))
	}
	if _, isObject := doc.(map[string]any); !isObject {
		return nil, errors.New("schema: want a JSON Schema object or the word object")
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	const loc = "task-schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("schema: %s", OneLine(err.Error()))
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("schema: %s", OneLine(err.Error()))
	}
	return &Schema{text: s, sch: sch}, nil
}

// Instruction is what the model is told, after the task's prompt.
func (s *Schema) Instruction() string {
	if s.sch == nil {
		return "Answer with one JSON object only: no text before or after it."
	}
	return "Answer with JSON only, no text before or after it, matching this JSON Schema:\n" + s.text
}

// fence finds fenced code blocks: their info string and their text.
var fence = regexp.MustCompile("(?ms)^[ \t]*(```|~~~)[ \t]*([A-Za-z0-9_-]*)[^\n]*\n(.*?)\n[ \t]*(```|~~~)[ \t]*$")

// Check takes the JSON of answer (the whole answer, or its one fenced
// block of JSON) and checks it against the schema. It returns the JSON
// as the model wrote it, or an error naming the first problem, one line.
func (s *Schema) Check(answer string) (string, error) {
	js, err := jsonOf(answer)
	if err != nil {
		return "", err
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(js))
	if err != nil {
		return "", fmt.Errorf("the answer is not valid JSON: %s", OneLine(err.Error()))
	}
	if s.sch == nil {
		if _, isObject := v.(map[string]any); !isObject {
			return "", errors.New("the answer is JSON, but not an object")
		}
		return js, nil
	}
	if err := s.sch.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return "", errors.New(firstError(ve))
		}
		return "", fmt.Errorf("the answer does not match the schema: %s", OneLine(err.Error()))
	}
	return js, nil
}

// jsonOf is the answer's JSON text: the whole answer when it parses, else
// the one fenced block that does.
func jsonOf(answer string) (string, error) {
	a := strings.TrimSpace(answer)
	if json.Valid([]byte(a)) {
		return a, nil
	}
	if u := markdownUnescaped(a); u != a && json.Valid([]byte(u)) {
		return u, nil
	}
	var found []string
	for _, m := range fence.FindAllStringSubmatch(a, -1) {
		if body := strings.TrimSpace(m[3]); json.Valid([]byte(body)) {
			found = append(found, body)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", errors.New("the answer holds no JSON: neither the whole answer nor a fenced block of it parses")
	}
	return "", fmt.Errorf("the answer holds %d JSON blocks; want one", len(found))
}

var english = message.NewPrinter(language.English)

// firstError is the deepest first cause of a validation error, with where
// in the answer it is: "at /tags/2: got number, want string".
func firstError(ve *jsonschema.ValidationError) string {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	at := "/" + strings.Join(ve.InstanceLocation, "/")
	return OneLine(fmt.Sprintf("the answer does not match the schema: at %s: %s", at, ve.ErrorKind.LocalizedString(english)))
}

// markdownUnescaped undoes Markdown's backslash escapes (CommonMark: a
// backslash before ASCII punctuation stands for that character). A bare
// JSON answer on a web page, read as Markdown, has its brackets escaped
// (a backslash before "[") and its backslashes doubled by the page's HTML
// turned into Markdown; this is the exact inverse of that escaping.
func markdownUnescaped(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
