package console

import (
	"context"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/doors/tableimport"
	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/internal/testkit"
)

func TestImportLimit(t *testing.T) {
	row := &tableimport.LimitError{What: tableimport.LimitRow, Row: 7, Size: 12 << 20, Max: 1 << 20, Name: "topic", Count: 200, Cell: 60 << 10}
	for _, tc := range []struct {
		name string
		L    pageLabels
		e    *tableimport.LimitError
		want string
	}{
		{"row", labelsEN, row, "the template would fill row 7 to 12 MiB ({{topic}} 200 times × 60 KiB), more than the 1 MiB a task may hold"},
		{"row zh", labelsZH, row, "模板会把第 7 行填到 12 MiB（{{topic}} 出现 200 次 × 60 KiB），超过一个任务最多能有的 1 MiB"},
		{"row without a placeholder", labelsEN, &tableimport.LimitError{What: tableimport.LimitRow, Row: 2, Size: 2 << 20, Max: 1 << 20},
			"the template would fill row 2 to 2 MiB, more than the 1 MiB a task may hold"},
		{"import", labelsEN, &tableimport.LimitError{What: tableimport.LimitImport, Size: 40 << 20, Max: 32 << 20},
			"the rows would fill to 40 MiB in all, more than the 32 MiB an import may hold"},
		{"import zh", labelsZH, &tableimport.LimitError{What: tableimport.LimitImport, Size: 40 << 20, Max: 32 << 20}, "所有行填好后共 40 MiB，超过一次导入最多能有的 32 MiB"},
		{"line", labelsEN, &tableimport.LimitError{What: tableimport.LimitLine, Row: 3, Size: 8 << 20, Max: 1 << 20},
			"line 3 of the CSV is 8 MiB long, more than the 1 MiB a line may be"},
		{"template zh", labelsZH, &tableimport.LimitError{What: tableimport.LimitTemplate, Size: 3 << 20, Max: 1 << 20}, "模板本身有 3 MiB，超过一个任务最多能有的 1 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			for _, p := range importLimit(tc.L, tc.e) {
				got += p.Text
			}
			if got != tc.want || strings.Contains(got, "\n") {
				t.Errorf("%q\nwant %q", got, tc.want)
			}
		})
	}
}

// The placeholder a row's size refusal names is the operator's column:
// shown as data, not words.
func TestImportLimit_NameIsData(t *testing.T) {
	parts := importLimit(labelsZH, &tableimport.LimitError{What: tableimport.LimitRow, Row: 7, Size: 12 << 20, Max: 1 << 20, Name: "topic", Count: 200, Cell: 60 << 10})
	var data []string
	for _, p := range parts {
		if p.Data {
			data = append(data, p.Text)
		}
	}
	if len(data) != 1 || data[0] != "{{topic}}" {
		t.Errorf("data parts %q, want [{{topic}}]", data)
	}
}

func TestRowRanges(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{[]int{2}, "2"},
		{[]int{2, 3, 4, 5}, "2–5"},
		{[]int{2, 3, 5, 7, 8}, "2–3, 5, 7–8"},
		{nil, ""},
	} {
		if got := rowRanges(tc.in); got != tc.want {
			t.Errorf("rowRanges(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// marked is parts as text with each datum in ⟦⟧: what the page marks
// translate="no".
func marked(parts []importPart) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Data {
			b.WriteString("⟦" + p.Text + "⟧")
		} else {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func TestImportError(t *testing.T) {
	cols := []string{"topic", "tone"}
	for _, tc := range []struct {
		name   string
		err    error
		zh, en string // en: the error's text, as the CLI prints it
	}{
		{"a template's unknown column", &tableimport.MappingError{What: tableimport.MapTemplateColumn, Field: "template", Name: "audience", Columns: cols},
			"模板中的 ⟦{{audience}}⟧ 不是任何一列的表头（表格的列：⟦topic, tone⟧）", "template: {{audience}}: no column has this header (columns: topic, tone)"},
		{"a template not closed", &tableimport.MappingError{What: tableimport.MapTemplateOpen, Field: "template", Name: "{{topic\n写"},
			"模板中的 ⟦{{topic\\x0a写⟧ 缺少结尾的 }}", `template: "{{topic\n写" is not closed with }}`},
		{"a template's empty name", &tableimport.MappingError{What: tableimport.MapTemplateEmpty, Field: "template"}, "模板中的 {{}} 没有写列名", "template: {{}} names no column"},
		{"a column the table lacks", &tableimport.MappingError{What: tableimport.MapNoColumn, Field: "follow-up", Name: "more", Columns: cols},
			"追问列：表格中没有名为 ⟦more⟧ 的列（表格的列：⟦topic, tone⟧）", `follow-up: no column "more" (columns: topic, tone)`},
		{"a field this page does not know", &tableimport.MappingError{What: tableimport.MapNoColumn, Field: "tags", Name: "标签", Columns: cols},
			"⟦tags⟧列：表格中没有名为 ⟦标签⟧ 的列（表格的列：⟦topic, tone⟧）", `tags: no column "标签" (columns: topic, tone)`},
		{"no content", &tableimport.MappingError{What: tableimport.MapNoContent, Field: "content"}, "内容：请填写模板，或填写内容所在的列", "content: give a template or the content's column"},
		{"a chain without its model", &tableimport.MappingError{What: tableimport.MapThenModel, Field: "then"}, "然后：填写了后续任务的内容，也要选择它的模型", "then: a chained task's content needs its model (then-model)"},
		{"not readable", &tableimport.TableError{What: tableimport.TableUnreadable, Name: "utf-16", Err: errors.New("bad surrogate")},
			"无法按 ⟦utf-16⟧ 编码读取这个文件：⟦bad surrogate⟧", "not readable as utf-16: bad surrogate"},
		{"a csv reader's error", &tableimport.TableError{What: tableimport.TableCSV, Err: errors.New("bare quote")}, "无法读取这个 CSV 文件：⟦bare quote⟧", "csv: bare quote"},
		{"not a workbook", &tableimport.TableError{What: tableimport.TableXLSX, Err: errors.New("zip: not a valid zip file")},
			"这不是可读取的 XLSX 文件：⟦zip: not a valid zip file⟧", "xlsx: zip: not a valid zip file"},
		{"a workbook's row", &tableimport.TableError{What: tableimport.TableXLSX, Row: 4, Err: errors.New("bad cell")}, "XLSX 文件的第 4 行无法读取：⟦bad cell⟧", "xlsx: row 4: bad cell"},
		{"no sheet", &tableimport.TableError{What: tableimport.TableNoSheet}, "这个 XLSX 文件里没有工作表", "xlsx: no sheet"},
		{"empty", &tableimport.TableError{What: tableimport.TableEmpty}, "表格是空的：没有一行有内容", "the table is empty"},
		{"a header twice", &tableimport.TableError{What: tableimport.TableHeaderTwice, Name: "tone"}, "表头中有两列都叫 ⟦tone⟧", `the header names column "tone" twice`},
		{"the file", &tableimport.TableError{What: tableimport.TableFile, Size: 9 << 20, Max: 8 << 20, Err: tableimport.ErrTooLarge},
			"文件有 9 MiB，超过上限 8 MiB", "the file is 9 MiB, more than 8 MiB: too large"},
		{"a zip bomb", &tableimport.TableError{What: tableimport.TableZipBomb, Name: "xl/sheet1.xml", Max: 64 << 20, Err: tableimport.ErrTooLarge},
			"XLSX 文件中的 ⟦xl/sheet1.xml⟧ 解压后远大于文件本身（压缩炸弹？），总计超过 64 MiB",
			"xlsx: xl/sheet1.xml unpacks to far more than the file (a zip bomb?), over 64 MiB in all: too large"},
		{"rows", &tableimport.TableError{What: tableimport.TableRows, Max: 10000, Err: tableimport.ErrTooLarge}, "表格超过 10000 行", "more than 10000 rows: too large"},
		{"columns", &tableimport.TableError{What: tableimport.TableColumns, Row: 2, Max: 200, Err: tableimport.ErrTooLarge}, "第 2 行超过 200 列", "row 2: more than 200 columns: too large"},
		{"a cell", &tableimport.TableError{What: tableimport.TableCell, Row: 3, Max: 64 << 10, Err: tableimport.ErrTooLarge}, "第 3 行有单元格超过 64 KiB", "row 3: a cell of more than 64 KiB: too large"},
		{"cells in all", &tableimport.TableError{What: tableimport.TableCells, Row: 275, Max: 16 << 20, Err: tableimport.ErrTooLarge},
			"到第 275 行为止，单元格内容总计超过 16 MiB", "row 275: the cells hold more than 16 MiB in all: too large"},
		{"not an error of tableimport", errors.New("disk full"), "disk full", "disk full"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			zh, en := importError(labelsZH, tc.err), importError(labelsEN, tc.err)
			if got := marked(zh); got != tc.zh {
				t.Errorf("zh %q\nwant %q", got, tc.zh)
			}
			if got := marked(en); got != tc.en || got != safetext.Line(tc.err.Error()) {
				t.Errorf("en %q\nwant %q", got, tc.en)
			}
			for _, p := range append(zh, en...) {
				if strings.ContainsAny(p.Text, "\n\r\x00") {
					t.Errorf("a part breaks the line: %q", p.Text)
				}
			}
		})
	}
}

var importErrRe = regexp.MustCompile(`<div class="ferr" id="import-error">(.*?)</div>`)

// markedHTML is what the page shows for marked text: the words escaped,
// each ⟦datum⟧ in a span marked translate="no".
func markedHTML(s string) string {
	var b strings.Builder
	for i, p := range strings.Split(strings.ReplaceAll(s, "⟧", "⟦"), "⟦") {
		if i%2 == 1 {
			b.WriteString(`<span translate="no">` + template.HTMLEscapeString(p) + `</span>`)
		} else {
			b.WriteString(template.HTMLEscapeString(p))
		}
	}
	return b.String()
}

// TestHTTPServer_ImportErrors renders /import with each of the mapping's
// errors and the file's, in Chinese and in English. In Chinese the reason
// is in Chinese, the operator's names in it marked as data, and the page
// shows no English word outside user data (the e2e crawl's check,
// testkit.EnglishWords, in Chromium); in English it is the error's text
// as the CLI prints it. After a mapping's error the file stays staged and
// the columns chosen stay in the form.
func TestHTTPServer_ImportErrors(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := startTestHTTP(t, consoleWithUsers(t), nil)
	defer h.Stop()
	o := newOperator(t, h)
	o.login("王芳", "wang-secret")
	topics := []byte("topic,tone\n春茶,轻松\n")
	mapping := func(f map[string]string) map[string]string {
		f["promptCol"], f["batch"], f["model"] = "tone", "春季", "writer"
		return f
	}
	zhPages := map[string]string{}
	for _, tc := range []struct {
		name   string
		file   string
		data   []byte
		fields map[string]string
		code   int
		zh, en string
	}{
		{"a template's unknown column", "topics.csv", topics, mapping(map[string]string{"template": "写{{受众}}"}), http.StatusUnprocessableEntity,
			"模板中的 ⟦{{受众}}⟧ 不是任何一列的表头（表格的列：⟦topic, tone⟧）", "template: {{受众}}: no column has this header (columns: topic, tone)"},
		{"a template not closed", "topics.csv", topics, mapping(map[string]string{"template": "写{{topic"}), http.StatusUnprocessableEntity,
			"模板中的 ⟦{{topic⟧ 缺少结尾的 }}", `template: "{{topic" is not closed with }}`},
		{"a template's empty name", "topics.csv", topics, mapping(map[string]string{"template": "写{{ }}"}), http.StatusUnprocessableEntity,
			"模板中的 {{}} 没有写列名", "template: {{}} names no column"},
		{"a column the table lacks", "topics.csv", topics, mapping(map[string]string{"contentCol": "body"}), http.StatusUnprocessableEntity,
			"内容列：表格中没有名为 ⟦body⟧ 的列（表格的列：⟦topic, tone⟧）", `content: no column "body" (columns: topic, tone)`},
		{"no content", "topics.csv", topics, mapping(map[string]string{}), http.StatusUnprocessableEntity,
			"内容：请填写模板，或填写内容所在的列", "content: give a template or the content's column"},
		{"a chain without its model", "topics.csv", topics, mapping(map[string]string{"contentCol": "topic", "then": "总结"}), http.StatusUnprocessableEntity,
			"然后：填写了后续任务的内容，也要选择它的模型", "then: a chained task's content needs its model (then-model)"},
		{"an empty table", "empty.csv", []byte(",\n\n"), map[string]string{"contentCol": "topic"}, http.StatusUnprocessableEntity,
			"表格是空的：没有一行有内容", "the table is empty"},
		{"a header twice", "dup.csv", []byte("主题,tone,主题\n1,2,3\n"), map[string]string{"contentCol": "tone"}, http.StatusUnprocessableEntity,
			"表头中有两列都叫 ⟦主题⟧", `the header names column "主题" twice`},
		{"an unreadable file", "book.xlsx", []byte("PK\x03\x04garbage"), map[string]string{"contentCol": "topic"}, http.StatusUnprocessableEntity,
			"这不是可读取的 XLSX 文件：⟦zip: not a valid zip file⟧", "xlsx: zip: not a valid zip file"},
		{"too many columns", "wide.csv", []byte("a\n" + strings.Repeat(",", 200) + "\n"), map[string]string{"contentCol": "a"}, http.StatusRequestEntityTooLarge,
			"第 2 行超过 200 列", "row 2: more than 200 columns: too large"},
	} {
		for _, lang := range []string{"zh-CN", "en"} {
			t.Run(tc.name+" "+lang, func(t *testing.T) {
				resp, page := o.upload(tc.file, tc.data, tc.fields, map[string]string{"Accept-Language": lang})
				want := markedHTML(tc.zh)
				if lang == "en" {
					want = template.HTMLEscapeString(tc.en)
				}
				if lang == "zh-CN" {
					zhPages[tc.name] = page
				}
				if m := importErrRe.FindStringSubmatch(page); resp.StatusCode != tc.code || m == nil || m[1] != want {
					t.Errorf("%d (want %d), the error %q\nwant %q", resp.StatusCode, tc.code, m, want)
				}
				if tc.fields["batch"] == "" {
					return
				}
				// A mapping's error: the file stays staged, the form as it was sent.
				for _, want := range []string{`<span translate="no">topics.csv</span>`, `id="promptCol" name="promptCol" list="headers" value="tone"`,
					`id="batch" name="batch" value="春季"`, `value="writer" selected`} {
					if !strings.Contains(page, want) {
						t.Errorf("the page lacks %s", want)
					}
				}
			})
		}
	}
	// Corrected, the form previews the staged file without choosing it again.
	resp, page := o.upload("", nil, mapping(map[string]string{"template": "写{{topic}}"}), map[string]string{"Accept-Language": "zh-CN"})
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "把 1 行有效数据提交为批次 春季") {
		t.Errorf("the correction without a file: %d\n%s", resp.StatusCode, page)
	}

	// The pages in Chromium, read as the e2e crawl reads every page.
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), testkit.ChromiumOptions(t, testkit.NeedChromium(t))...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	for name, page := range zhPages {
		doc, _ := json.Marshal(page)
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("document.open(); document.write("+string(doc)+"); document.close(); true")); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		text, err := chromedp.Run(ctx, chromedp.Evaluate[string](testkit.ZhText))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if left := testkit.EnglishWords(text); len(left) > 0 || !strings.Contains(text, "导入表格") {
			t.Errorf("%s in Chinese shows English: %q", name, left)
		}
	}
}
