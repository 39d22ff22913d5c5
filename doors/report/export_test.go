package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding/simplifiedchinese"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// exportRows are rows a team's batch holds: Chinese text, a formula-like
// error, control characters, and a result longer than an Excel cell.
func exportRows() []Row {
	return []Row{
		{TaskID: "t1", Lane: taskfile.KindWeb, Model: "web", Batch: "春季上新", State: "success", Attempt: 1, Content: "写一段春季上新的文案", Result: "春风十里 🌸\n第二行"},
		{TaskID: "t2", Lane: taskfile.KindAPI, Model: "api", Batch: "春季上新", State: "failed", Attempt: 3, Content: "=HYPERLINK(\"x\")", Error: "=cmd|' /c calc'!A0", Result: strings.Repeat("长", xlsxCellMax+10)},
		{TaskID: "t3", Lane: taskfile.KindAPI, Model: "api", Batch: "春季上新", State: "success", Content: "bell \a here", Result: "ok"},
	}
}

func TestResultsTable_Content(t *testing.T) {
	cols, recs := ResultsTable(exportRows(), false)
	ci := -1
	for i, c := range cols {
		if c == "content" {
			ci = i
		}
	}
	if ci != len(resultColumns) {
		t.Fatalf("content column at %d of %v, want right after the fixed columns", ci, cols)
	}
	if recs[0][ci] != "写一段春季上新的文案" || len(recs) != 3 {
		t.Errorf("content cell %q", recs[0][ci])
	}
}

func TestWriteResults_Encodings(t *testing.T) {
	rows := exportRows()
	var utf, gb bytes.Buffer
	if err := WriteResultsCSV(&utf, rows, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteResultsGB18030CSV(&gb, rows, false); err != nil {
		t.Fatal(err)
	}
	back, err := simplifiedchinese.GB18030.NewDecoder().Bytes(gb.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back, utf.Bytes()) || bytes.Equal(gb.Bytes(), utf.Bytes()) {
		t.Errorf("GB18030 CSV does not decode to the UTF-8 CSV (or is not encoded at all)")
	}
	recs, err := csv.NewReader(&utf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if e := recs[2][11]; !strings.HasPrefix(e, "'=") {
		t.Errorf("a formula-like error is %q in the CSV", e)
	}

	var x bytes.Buffer
	if err := WriteResultsXLSX(&x, rows, false); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenReader(&x)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := f.GetRows("results")
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := ResultsTable(rows, false)
	if len(got) != 4 || strings.Join(got[0], ",") != strings.Join(cols, ",") {
		t.Fatalf("xlsx rows %d, header %v", len(got), got[0])
	}
	if got[1][13] != "春风十里 🌸\n第二行" || got[1][14] != "写一段春季上新的文案" {
		t.Errorf("xlsx row 1: result %q content %q", got[1][13], got[1][14])
	}
	if got[2][11] != "=cmd|' /c calc'!A0" {
		t.Errorf("xlsx keeps a formula-like error as text exactly: %q", got[2][11])
	}
	if fm, _ := f.GetCellFormula("results", "L3"); fm != "" {
		t.Errorf("an error cell became a formula: %q", fm)
	}
	if r := []rune(got[2][13]); len(r) != xlsxCellMax || !strings.HasSuffix(got[2][13], xlsxClipNote) {
		t.Errorf("a long result is %d characters in the xlsx, want %d ending in the clip note", len(r), xlsxCellMax)
	}
	if got[3][14] != `bell \x07 here` {
		t.Errorf("a control character reaches the workbook as it is: %q", got[3][14])
	}
}
