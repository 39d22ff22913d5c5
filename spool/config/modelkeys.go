package config

import (
	"fmt"

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
	switch m.Tokenizer {
	case "":
		m.Tokenizer = TokenizerO200k
	case TokenizerO200k, TokenizerCl100k:
	default:
		return &ConfigError{Key: key + ".tokenizer", Msg: fmt.Sprintf("%q is not %s (the default) or %s", m.Tokenizer, TokenizerO200k, TokenizerCl100k)}
	}
	switch m.SchemaMode {
	case "":
		m.SchemaMode = SchemaInstruction
	case SchemaInstruction:
	case SchemaNative:
		if m.Kind != taskfile.KindAPI {
			return &ConfigError{Key: key + ".schemaMode", Msg: "native is for api models: a web page takes the schema as an instruction"}
		}
	default:
		return &ConfigError{Key: key + ".schemaMode", Msg: fmt.Sprintf("%q is not %s (the default) or %s", m.SchemaMode, SchemaInstruction, SchemaNative)}
	}
	return nil
}

// NativeSchema reports whether a task's schema goes to this model as
// response_format rather than as an instruction.
func (m *ModelConfig) NativeSchema() bool { return m.SchemaMode == SchemaNative }
