package console

import (
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spoolgate/spoolgate/doors/actions"
	"github.com/spoolgate/spoolgate/doors/tableimport"
	"github.com/spoolgate/spoolgate/internal/safetext"
)

// The table import, /import: upload a CSV or XLSX, name the columns or
// give a template, see the first rows and every row's problem with its
// number, then submit the valid rows as one batch (actions.TableDrops and
// DropRows, as `spoolgate submit --table` does). The checked table waits
// in the session between the preview and the submit.

// maxUpload bounds a form's body: the table and its form fields.
const maxUpload = tableimport.MaxFile + 1<<20

// previewRows is how many rows the preview shows.
const previewRows = 10

type stagedImport struct {
	Batch string
	Rows  []tableimport.Row // nil until a mapping of Table gave rows
	// Table and File are the file as read, kept for a correction of the
	// form: the operator fixes a column or the template and previews
	// again without choosing the file again.
	Table *tableimport.Table
	File  string
}

type importView struct {
	L       pageLabels
	A       actView
	Models  []modelChoice
	F       map[string]string
	Err     string
	Msg     []importPart // a tableimport error in the page's language, instead of Err
	Format  string
	Header  []string
	Preview [][]string
	PrevN   []int
	Filled  []string // each preview row's content as the mapping fills it (the prompt it becomes)
	Titles  []string // each preview row's name (its title, or else the first words of its content)
	Bad     []rowErr
	Dups    string // the rows submitted before, in one line ("" for none)
	Valid   int
	Batch   string
	Total   int
	Kept    []importPart // the staged file a preview without a file reuses, in a sentence (nil for none)
}

type rowErr struct {
	N   int
	Err string
}

var importTmpl = template.Must(template.New("import").Parse(`<!doctype html>
<html lang="{{.L.Lang}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>spoolgate · {{.A.L.Import}}</title><style>` + detailCSS + actCSS + `</style></head><body>
` + userBar + `
<nav><a href="/">← {{.L.Title}}</a></nav>
<h1>{{.A.L.Import}}</h1>
{{if or .Err .Msg}}<div class="ferr" id="import-error">{{.Err}}{{template "parts" .Msg}}</div>{{end}}
{{if .Header}}<h2>{{.A.L.Staged}} <span class="meta">(<span translate="no">{{.Format}}</span>, {{.Total}})</span></h2>
<table class="preview fields"><tr><th>{{.A.L.Row}}</th><th>{{.A.L.TitleCol}}</th><th>{{.A.L.Content}}</th>{{range .Header}}<th translate="no">{{.}}</th>{{end}}</tr>
{{range $i, $r := .Preview}}<tr class="preview-row"><td>{{index $.PrevN $i}}</td><td class="title" translate="no">{{index $.Titles $i}}</td><td class="filled" translate="no">{{index $.Filled $i}}</td>{{range $r}}<td translate="no">{{.}}</td>{{end}}</tr>{{end}}</table>
{{if .Dups}}<div class="meta" id="import-dups">{{.Dups}}</div>{{end}}
{{if .Bad}}<h2>{{.A.L.Errors}} ({{len .Bad}})</h2><table class="row-errors">{{range .Bad}}<tr class="row-error" data-row="{{.N}}"><td>{{$.A.L.Row}} {{.N}}</td><td>{{.Err}}</td></tr>{{end}}</table>{{end}}
{{if .Valid}}<form method="post" action="/import">` + hiddenCSRF + `<input type="hidden" name="step" value="submit">
<button id="import-submit">{{printf .A.L.SubmitRows .Valid .Batch}}</button></form>{{else}}<div class="meta">{{.A.L.NoRows}}</div>{{end}}
{{end}}
<h2>{{.A.L.File}}</h2>
<form method="post" action="/import" enctype="multipart/form-data">` + hiddenCSRF + `<input type="hidden" name="step" value="preview">
<input type="file" id="file" name="file" accept=".csv,.xlsx,text/csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet">{{with .Kept}}<div class="meta" id="kept-file">{{template "parts" .}}</div>{{end}}
<label for="batch">{{.A.L.Batch}}</label><input id="batch" name="batch" value="{{index .F "batch"}}">
<label for="template">{{.A.L.Template}}</label><textarea id="template" name="template" translate="no">{{index .F "template"}}</textarea><div class="meta">{{.A.L.TemplateHint}}</div>
<label for="contentCol">{{.A.L.Content}} · {{.A.L.Column}}</label><input id="contentCol" name="contentCol" list="headers" value="{{index .F "contentCol"}}">
<label for="promptCol">{{.A.L.Prompt}} · {{.A.L.Column}}</label><input id="promptCol" name="promptCol" list="headers" value="{{index .F "promptCol"}}">
<label for="modelCol">{{.A.L.Model}} · {{.A.L.Column}}</label><input id="modelCol" name="modelCol" list="headers" value="{{index .F "modelCol"}}">
<label for="priorityCol">{{.A.L.Priority}} · {{.A.L.Column}}</label><input id="priorityCol" name="priorityCol" list="headers" value="{{index .F "priorityCol"}}">
<label for="outputCol">{{.A.L.Output}} · {{.A.L.Column}}</label><input id="outputCol" name="outputCol" list="headers" value="{{index .F "outputCol"}}">
<label for="titleCol">{{.A.L.TitleCol}} · {{.A.L.Column}}</label><input id="titleCol" name="titleCol" list="headers" value="{{index .F "titleCol"}}"><div class="meta">{{.A.L.TitleHint}}</div>
<label for="followUpCol">{{.A.L.FollowUp}} · {{.A.L.Column}}</label><input id="followUpCol" name="followUpCol" list="headers" value="{{index .F "followUpCol"}}">
<label for="thenModel">{{.A.L.ThenModel}}</label><select id="thenModel" name="thenModel"><option value=""></option>{{range .Models}}<option value="{{.Name}}"{{if eq .Name (index $.F "thenModel")}} selected{{end}} translate="no">{{.Name}} ({{.Lane}})</option>{{end}}</select>
<label for="then">{{.A.L.Then}}</label><input id="then" name="then" value="{{index .F "then"}}"><div class="meta"><code>{{"{{result}}"}}</code> {{.A.L.ThenHint}}</div>
{{if .Header}}<datalist id="headers">{{range .Header}}<option value="{{.}}">{{end}}</datalist>{{end}}
<label for="model">{{.A.L.DefaultModel}}</label><select id="model" name="model"><option value=""></option>{{range .Models}}<option value="{{.Name}}"{{if .Selected}} selected{{end}} translate="no">{{.Name}} ({{.Lane}})</option>{{end}}</select>
<p><button id="preview">{{.A.L.Preview}}</button></p>
</form></body></html>
{{define "parts"}}{{range .}}{{if .Data}}<span translate="no">{{.Text}}</span>{{else}}{{.Text}}{{end}}{{end}}{{end}}`))

var importFields = []string{"batch", "template", "contentCol", "promptCol", "modelCol", "priorityCol", "outputCol", "model", "titleCol", "followUpCol", "thenModel", "then"}

func (h *httpServer) tooLarge(w http.ResponseWriter, r *http.Request, err error) {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) || errors.Is(err, tableimport.ErrTooLarge) {
		http.Error(w, fmt.Sprintf(labelsFor(r).actions().TooLarge, tableimport.MaxFile>>20), http.StatusRequestEntityTooLarge)
		return
	}
	http.Error(w, "bad form: "+err.Error(), http.StatusBadRequest)
}

func (h *httpServer) importPage(w http.ResponseWriter, r *http.Request) {
	L := labelsFor(r)
	if r.Method != http.MethodPost {
		if h.needLogin(w, r) {
			return
		}
		h.render(w, importTmpl, &importView{L: L, A: h.actView(r, L), Models: h.models(""), F: map[string]string{}}, http.StatusOK)
		return
	}
	s := h.authorize(w, r)
	if s == nil {
		return
	}
	v := importView{L: L, A: h.actView(r, L), F: map[string]string{}}
	for _, f := range importFields {
		v.F[f] = strings.TrimSpace(r.PostFormValue(f))
	}
	v.Models = h.models(v.F["model"])
	if r.PostFormValue("step") == "submit" {
		h.importSubmit(w, r, s, &v)
		return
	}
	t, file, ok := h.importTable(w, r, s, &v)
	if !ok {
		return
	}
	// The table stays staged while the form is corrected: a preview
	// without a file reuses it.
	h.auth.mu.Lock()
	s.staged = &stagedImport{Table: t, File: file}
	h.auth.mu.Unlock()
	v.Kept = say(v.A.L.KeptFile, datum(file))
	batch := v.F["batch"]
	if batch == "" {
		batch = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		v.F["batch"] = batch
	}
	rows, err := tableimport.Mapping{Template: v.F["template"], ContentCol: v.F["contentCol"], PromptCol: v.F["promptCol"],
		ModelCol: v.F["modelCol"], PriorityCol: v.F["priorityCol"], OutputCol: v.F["outputCol"], Model: v.F["model"],
		FollowUpCol: v.F["followUpCol"], ThenModel: v.F["thenModel"], Then: v.F["then"], TitleCol: v.F["titleCol"]}.Rows(t)
	if h.importTooLarge(w, &v, err) {
		return
	}
	if err != nil {
		v.Msg = importError(v.L, err)
		h.render(w, importTmpl, &v, http.StatusUnprocessableEntity)
		return
	}
	h.auth.mu.Lock()
	s.staged = &stagedImport{Batch: batch, Rows: rows, Table: t, File: file}
	h.auth.mu.Unlock()
	v.Format, v.Header, v.Batch, v.Total = t.Format, t.Header, batch, len(t.Rows)
	for i := 0; i < len(t.Rows) && i < previewRows; i++ {
		v.Preview = append(v.Preview, t.Rows[i])
		v.PrevN = append(v.PrevN, t.N[i])
		v.Filled = append(v.Filled, safetext.ClipRunes(safetext.Text(rows[i].Content), 300))
		v.Titles = append(v.Titles, taskName(rows[i].Title, rows[i].Content))
	}
	// A table imported again: its rows' taskIds exist already. They are
	// summed up in one line, not listed one by one among the errors.
	var dups []int
	for _, d := range actions.TableDrops(h.store, batch, rows) {
		switch {
		case d.Err == "":
			v.Valid++
		case strings.Contains(d.Err, "already exists in") || strings.Contains(d.Err, "is already waiting in"):
			dups = append(dups, d.N)
		default:
			v.Bad = append(v.Bad, rowErr{N: d.N, Err: v.A.L.Problem(problemField(d.Err), d.Err)})
		}
	}
	if len(dups) > 0 {
		v.Dups = fmt.Sprintf(v.A.L.Dups, len(dups), rowRanges(dups))
	}
	h.render(w, importTmpl, &v, http.StatusOK)
}

// importTooLarge answers a refusal for size, 413 with its reason in the
// page's language, and reports whether err was one.
func (h *httpServer) importTooLarge(w http.ResponseWriter, v *importView, err error) bool {
	if !errors.Is(err, tableimport.ErrTooLarge) {
		return false
	}
	var le *tableimport.LimitError
	var te *tableimport.TableError
	switch {
	case errors.As(err, &le):
		v.Msg = importLimit(v.L, le)
	case errors.As(err, &te): // it says which limit, as LimitError does
		v.Msg = importError(v.L, te)
	default:
		v.Err = fmt.Sprintf(v.A.L.TooLarge, tableimport.MaxFile>>20) + ": " + safetext.Line(err.Error())
	}
	h.render(w, importTmpl, v, http.StatusRequestEntityTooLarge)
	return true
}

// problemField is the field a row's problem names after "row N: ".
func problemField(msg string) string {
	if _, rest, ok := strings.Cut(msg, ": "); ok {
		f, _, _ := strings.Cut(rest, ":")
		return f
	}
	return ""
}

func (h *httpServer) importSubmit(w http.ResponseWriter, r *http.Request, s *session, v *importView) {
	h.auth.mu.Lock()
	st := s.staged
	s.staged = nil
	h.auth.mu.Unlock()
	if st == nil || st.Rows == nil {
		v.Err = v.A.L.NoRows
		h.render(w, importTmpl, v, http.StatusConflict)
		return
	}
	// Checked again now: a row submitted meanwhile is refused as a duplicate.
	drops := actions.TableDrops(h.store, st.Batch, st.Rows)
	n, err := actions.DropRows(h.store, drops)
	var tasks []string
	var bad int
	for _, d := range drops {
		if d.Err == "" {
			tasks = append(tasks, string(d.Drop.Lane)+"/"+d.Drop.ID)
		} else {
			bad++
		}
	}
	if n > 0 {
		h.audit(r, s.user, "import", tasks, st.Batch, fmt.Sprintf("%d rows, %d refused", len(drops), bad))
	}
	if err != nil {
		v.Err = safetext.Line(err.Error())
		h.render(w, importTmpl, v, http.StatusInternalServerError)
		return
	}
	h.auth.setFlashLink(s, fmt.Sprintf(v.A.L.Submitted, n)+fmt.Sprintf(" · %s %d", v.A.L.Errors, bad), batchHref(st.Batch))
	http.Redirect(w, r, "/", http.StatusSeeOther) // the batch shows once intake has taken its tasks
}

// rowRanges is rows (ascending) as "2–31, 40".
func rowRanges(rows []int) string {
	var out []string
	for i := 0; i < len(rows); {
		j := i
		for j+1 < len(rows) && rows[j+1] == rows[j]+1 {
			j++
		}
		if j > i {
			out = append(out, fmt.Sprintf("%d–%d", rows[i], rows[j]))
		} else {
			out = append(out, strconv.Itoa(rows[i]))
		}
		i = j + 1
	}
	return strings.Join(out, ", ")
}

// importTable is the table a preview maps: the uploaded file, or, when
// the form came without one, the file staged by the session's last
// preview (a correction). It answers the refusal itself when there is
// neither, or the file cannot be read.
func (h *httpServer) importTable(w http.ResponseWriter, r *http.Request, s *session, v *importView) (*tableimport.Table, string, bool) {
	f, fh, err := r.FormFile("file")
	if errors.Is(err, http.ErrMissingFile) {
		h.auth.mu.Lock()
		st := s.staged
		h.auth.mu.Unlock()
		if st != nil && st.Table != nil {
			return st.Table, st.File, true
		}
	}
	if err != nil {
		v.Err = v.A.L.File + ": " + err.Error()
		h.render(w, importTmpl, v, http.StatusUnprocessableEntity)
		return nil, "", false
	}
	defer f.Close()
	if fh.Size > tableimport.MaxFile {
		h.tooLarge(w, r, tableimport.ErrTooLarge)
		return nil, "", false
	}
	// Read into one buffer of the file's size: io.ReadAll would grow one
	// by doubling, twice the file in garbage before the table is read.
	data := make([]byte, fh.Size)
	if _, err := io.ReadFull(f, data); err != nil {
		h.tooLarge(w, r, err)
		return nil, "", false
	}
	t, err := tableimport.Read(data)
	if h.importTooLarge(w, v, err) {
		return nil, "", false
	}
	if err != nil {
		v.Msg = importError(v.L, err)
		h.render(w, importTmpl, v, http.StatusUnprocessableEntity)
		return nil, "", false
	}
	return t, fh.Filename, true
}
