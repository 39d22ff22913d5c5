package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The values of a model's tokenizer: OpenAI's two BPE vocabularies, which
// count most chat models' text within a few percent of their own
// tokenizers. o200k_base (GPT-4o and later) is the default: it splits
// Chinese and other non-Latin text closer to today's models than
// cl100k_base (GPT-4, GPT-3.5), kept for a model the team prices that way.
const (
	TokenizerO200k  = "o200k_base"
	TokenizerCl100k = "cl100k_base"
)

// The values of an api model's schemaMode.
const (
	// SchemaInstruction tells the model a task's schema after its prompt
	// (every endpoint takes it).
	SchemaInstruction = "instruction"
	// SchemaNative sends it as response_format (json_schema, or
	// json_object for `schema: object`), for endpoints that take it; the
	// answer is checked against the schema all the same.
	SchemaNative = "native"
)

// checkModelKeys defaults and checks m's tokenizer and schemaMode.
func checkModelKeys(key string, m *ModelConfig) error {
	if err := pick(key+".tokenizer", &m.Tokenizer, TokenizerO200k, TokenizerCl100k); err != nil {
		return err
	}
	if err := pick(key+".schemaMode", &m.SchemaMode, SchemaInstruction, SchemaNative); err != nil {
		return err
	}
	if m.SchemaMode == SchemaNative && m.Kind != taskfile.KindAPI {
		return &ConfigError{Key: key + ".schemaMode", Msg: "native is for api models: a web page takes the schema as an instruction"}
	}
	return nil
}

// pick sets an empty *v to choices[0], its default, and refuses a value
// that is none of choices, naming them.
func pick(key string, v *string, choices ...string) error {
	switch {
	case *v == "":
		*v = choices[0]
	case !slices.Contains(choices, *v):
		return &ConfigError{Key: key, Msg: fmt.Sprintf("%q is not %s (the default) or %s", *v, choices[0], strings.Join(choices[1:], " or "))}
	}
	return nil
}

// NativeSchema reports whether a task's schema goes to this model as
// response_format rather than as an instruction.
func (m *ModelConfig) NativeSchema() bool { return m.SchemaMode == SchemaNative }
