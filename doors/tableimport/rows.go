package tableimport

import (
	"errors"
	"fmt"
	"strings"
)

// Template is content written around a row's cells: {{name}} stands for
// the row's cell in the column whose header is name (spaces inside the
// braces ignored). `为{{channel}}写一篇关于{{topic}}的稿子，语气{{tone}}`.
type Template struct {
	parts []part
}

type part struct {
	text string
	col  int // -1 for text
	name string
}

// ParseTemplate reads s against a table's header: a name no column has,
// an empty {{}} or a {{ never closed is an error naming it.
func ParseTemplate(s string, header []string) (*Template, error) {
	if len(s) > MaxRow { // its text alone is more than a task may hold
		return nil, &LimitError{What: LimitTemplate, Size: int64(len(s)), Max: MaxRow}
	}
	t := &Template{}
	rest := s
	for rest != "" {
		i := strings.Index(rest, "{{")
		if i < 0 {
			t.parts = append(t.parts, part{text: rest, col: -1})
			break
		}
		if i > 0 {
			t.parts = append(t.parts, part{text: rest[:i], col: -1})
		}
		j := strings.Index(rest[i+2:], "}}")
		if j < 0 {
			return nil, &MappingError{What: MapTemplateOpen, Field: "template", Name: rest[i:]}
		}
		name := strings.TrimSpace(rest[i+2 : i+2+j])
		if name == "" {
			return nil, &MappingError{What: MapTemplateEmpty, Field: "template"}
		}
		col := -1
		for k, h := range header {
			if h == name {
				col = k
			}
		}
		if col < 0 {
			return nil, &MappingError{What: MapTemplateColumn, Field: "template", Name: name, Columns: header}
		}
		t.parts = append(t.parts, part{col: col, name: name})
		rest = rest[i+2+j+2:]
	}
	return t, nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// Size is what the template fills to from cell, computed from its text
// and its placeholders' cell lengths without filling it. heavy names
// the placeholder that adds most, with how many times the template names
// it and its cell's length.
func (t *Template) Size(cell func(col int) string) (size int64, heavy string, count int, cellLen int64) {
	times := map[int]int{}
	for _, p := range t.parts {
		if p.col < 0 {
			size += int64(len(p.text))
			continue
		}
		n := int64(len(cell(p.col)))
		size += n
		times[p.col]++
		if w := int64(times[p.col]) * n; w > int64(count)*cellLen || heavy == "" {
			heavy, count, cellLen = p.name, times[p.col], n
		}
	}
	return size, heavy, count, cellLen
}

// Key is what the row's cells that the template names say, each once,
// in the template's order, joined by " · ": the row's key columns.
func (t *Template) Key(cell func(col int) string) string {
	var vals []string
	seen := map[int]bool{}
	for _, p := range t.parts {
		if p.col < 0 || seen[p.col] {
			continue
		}
		seen[p.col] = true
		if v := strings.TrimSpace(cell(p.col)); v != "" {
			vals = append(vals, v)
		}
	}
	return strings.Join(vals, " · ")
}

// maxTitle is the most characters of a title (config.MaxTitle: intake
// refuses a longer one).
const maxTitle = 200

// titleOf is s as a title: on one line, its spaces collapsed, ending in
// "…" where it is cut at maxTitle characters.
func titleOf(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxTitle {
		s = string(r[:maxTitle-1]) + "…"
	}
	return s
}

// Expand fills the template from cell (by column index), refusing as
// soon as the filled text would pass limit: the text is held to the
// limit as it is built, never built first and measured after. missing
// names the columns whose cell was empty.
func (t *Template) Expand(cell func(col int) string, limit int) (out string, missing []string, err error) {
	var b strings.Builder
	for _, p := range t.parts {
		v := p.text
		if p.col >= 0 {
			if v = cell(p.col); v == "" {
				missing = append(missing, p.name)
			}
		}
		if b.Len()+len(v) > limit {
			return "", missing, &LimitError{What: LimitRow, Size: int64(b.Len() + len(v)), Max: int64(limit)}
		}
		b.WriteString(v)
	}
	return b.String(), missing, nil
}

// Mapping says where a row's task fields come from: a column's header
// for each, or Template for the content; Model is the model of rows with
// no model column (or an empty cell there).
type Mapping struct {
	Template                                     string
	ContentCol, PromptCol, ModelCol, PriorityCol string
	OutputCol                                    string
	Model                                        string
	// FollowUpCol is the column of a second message sent in the same chat
	// after the row's first (a follow-up task), when its cell is not empty.
	FollowUpCol string
	// TitleCol is the column that names each row's task (its title:).
	// Without one, a row filled from a template is named by its key
	// columns, the cells the template names (joined by " · "): a long
	// template's first words would name every row alike.
	TitleCol string
	// ThenModel chains each row to a second task on that model, whose
	// content is Then with {{result}} standing for the row's last answer
	// (Then empty: the answer alone).
	ThenModel, Then string
}

// Row is one row's task fields, or why it gives none.
type Row struct {
	N                                        int // the spreadsheet's row number
	Model, Content, Prompt, Priority, Output string
	Title                                    string // the task's name (Mapping.TitleCol)
	FollowUp                                 string // the follow-up message, if any (FollowUpCol)
	ThenModel, Then                          string // the chained task's model and content (Mapping)
	Err                                      string
}

// Rows maps every row of t; an error is the mapping's own (a column that
// is not there, a template that does not parse), not a row's.
func (m Mapping) Rows(t *Table) ([]Row, error) {
	col := func(key, name string) (int, error) {
		if name == "" {
			return -1, nil
		}
		c := t.Col(name)
		if c < 0 {
			return -1, &MappingError{What: MapNoColumn, Field: key, Name: name, Columns: t.Header}
		}
		return c, nil
	}
	var tmpl *Template
	var err error
	if m.Template != "" {
		if tmpl, err = ParseTemplate(m.Template, t.Header); err != nil {
			return nil, err
		}
	} else if m.ContentCol == "" {
		return nil, &MappingError{What: MapNoContent, Field: "content"}
	}
	var cols [7]int // content, prompt, model, priority, output, follow-up, title
	for i, c := range []struct{ key, name string }{{"content", m.ContentCol}, {"prompt", m.PromptCol}, {"model", m.ModelCol},
		{"priority", m.PriorityCol}, {"output", m.OutputCol}, {"follow-up", m.FollowUpCol}, {"title", m.TitleCol}} {
		if cols[i], err = col(c.key, c.name); err != nil {
			return nil, err
		}
	}
	cc, pc, mc, prc, oc, fc, tc := cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6]
	if m.Then != "" && m.ThenModel == "" {
		return nil, &MappingError{What: MapThenModel, Field: "then"}
	}
	// Every row's size first, from the cell lengths alone: a row past a
	// task's size, or rows past the import's total, refuse the import
	// before one byte of it is filled.
	var total int64
	for i := range t.Rows {
		cell := func(c int) string { return t.Cell(i, c) }
		size := int64(len(cell(pc)) + len(cell(fc)))
		var heavy string
		var count int
		var cellLen int64
		if tmpl != nil {
			var n int64
			n, heavy, count, cellLen = tmpl.Size(cell)
			size += n
		} else {
			size += int64(len(cell(cc)))
		}
		if size > MaxRow {
			return nil, &LimitError{What: LimitRow, Row: t.N[i], Size: size, Max: MaxRow, Name: heavy, Count: count, Cell: cellLen}
		}
		total += size
	}
	if total > MaxImport {
		return nil, &LimitError{What: LimitImport, Size: total, Max: MaxImport}
	}
	rows := make([]Row, len(t.Rows))
	for i := range t.Rows {
		cell := func(c int) string { return t.Cell(i, c) }
		r := Row{N: t.N[i], Prompt: cell(pc), Priority: cell(prc), Output: cell(oc), Model: cell(mc), FollowUp: cell(fc), ThenModel: m.ThenModel, Then: m.Then}
		if r.Model == "" {
			r.Model = m.Model
		}
		switch {
		case tc >= 0:
			r.Title = titleOf(cell(tc))
		case tmpl != nil:
			r.Title = titleOf(tmpl.Key(cell))
		}
		if tmpl != nil {
			var missing []string
			var err error
			if r.Content, missing, err = tmpl.Expand(cell, MaxRow-len(r.Prompt)); err != nil {
				var le *LimitError
				if errors.As(err, &le) {
					le.Row = r.N
				}
				return nil, err
			}
			if len(missing) > 0 {
				r.Err = fmt.Sprintf("column %s is empty", strings.Join(missing, ", "))
			}
		} else {
			r.Content = cell(cc)
		}
		rows[i] = r
	}
	return rows, nil
}
