package apimodel

import (
	"testing"

	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// A model with schemaMode: native gets a task's schema as response_format
// (json_schema, or json_object for `schema: object`); one in instruction
// mode, and a task without a schema, get none.
func TestExecutor_ResponseFormat(t *testing.T) {
	s := stand(t, apistand.Options{})
	c := testConfig(t, s.URL(),
		config.ModelConfig{Name: "native", SchemaMode: config.SchemaNative},
		config.ModelConfig{Name: "told", SchemaMode: config.SchemaInstruction},
	)
	e := executor(t, c)
	const sch = `{"type":"object","required":["title"],"properties":{"title":{"type":"string"}}}`
	tests := []struct {
		name, model string
		schema      taskfile.SchemaText
		want        string
	}{
		{"native json_schema", "native", sch, `{"json_schema":{"name":"answer","schema":` + sch + `,"strict":false},"type":"json_schema"}`},
		{"native object", "native", taskfile.SchemaObject, `{"type":"json_object"}`},
		{"native no schema", "native", "", ""},
		{"native schema not JSON", "native", "{title", ""},
		{"instruction", "told", sch, ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := job(c, tt.model, "", "write", nil)
			j.Task.Schema = tt.schema
			if _, err := e.Execute(t.Context(), j); err != nil {
				t.Fatal(err)
			}
			if got := string(s.Requests()[i].ResponseFormat); got != tt.want {
				t.Errorf("response_format %s; want %s", got, tt.want)
			}
		})
	}
}
