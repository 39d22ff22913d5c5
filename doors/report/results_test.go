package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"testing"
)

// The thinking kept beside a result: its own jsonl field and, when a row
// has one, its own CSV column; never in the result's.
func TestWriteResults_Reasoning(t *testing.T) {
	rows := []Row{
		{TaskID: "r1", Lane: "web", Result: "# Answer", Reasoning: "=the user wants a title"},
		{TaskID: "a1", Lane: "api", Result: "plain"},
	}
	var j bytes.Buffer
	if err := WriteResultsJSONL(&j, rows); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&j)
	var got []map[string]any
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	if got[0]["reasoning"] != "=the user wants a title" || got[0]["result"] != "# Answer" {
		t.Fatalf("jsonl row %v", got[0])
	}
	if _, ok := got[1]["reasoning"]; ok {
		t.Fatalf("a row without thinking has a reasoning field: %v", got[1])
	}
	var c bytes.Buffer
	if err := WriteResultsCSV(&c, rows, false); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := -1
	for i, h := range recs[0] {
		if h == "reasoning" {
			col = i
		}
	}
	if col < 0 || recs[1][col] != "'=the user wants a title" || recs[2][col] != "" {
		t.Fatalf("csv %q (reasoning column %d)", recs, col)
	}
	var none bytes.Buffer
	_ = WriteResultsCSV(&none, rows[1:], false)
	if bytes.Contains(none.Bytes(), []byte("reasoning")) {
		t.Fatalf("a table without thinking has a reasoning column:\n%s", none.Bytes())
	}
}
