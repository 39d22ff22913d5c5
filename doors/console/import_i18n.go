package console

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spoolgate/spoolgate/doors/tableimport"
	"github.com/spoolgate/spoolgate/internal/safetext"
)

// importLimits are the import's refusals for size in the page's language:
// the reason names what would grow past which limit, on one line.
type importLimits struct {
	Row, Heavy, RowTail, Import, Line, Template string
}

var (
	importLimitsEN = importLimits{
		Row:      "the template would fill row %d to %s",
		Heavy:    " (%s %d times × %s)",
		RowTail:  ", more than the %s a task may hold",
		Import:   "the rows would fill to %s in all, more than the %s an import may hold",
		Line:     "line %d of the CSV is %s long, more than the %s a line may be",
		Template: "the template is %s, more than the %s a task may hold",
	}
	importLimitsZH = importLimits{
		Row:      "模板会把第 %d 行填到 %s",
		Heavy:    "（%s 出现 %d 次 × %s）",
		RowTail:  "，超过一个任务最多能有的 %s",
		Import:   "所有行填好后共 %s，超过一次导入最多能有的 %s",
		Line:     "CSV 第 %d 行长 %s，超过一行最多能有的 %s",
		Template: "模板本身有 %s，超过一个任务最多能有的 %s",
	}
)

// importLimit is e's reason in L's language, the placeholder it names
// (the operator's column) as data.
func importLimit(L pageLabels, e *tableimport.LimitError) []importPart {
	w := importLimitsEN
	if L.Lang == labelsZH.Lang {
		w = importLimitsZH
	}
	b := tableimport.Bytes
	switch e.What {
	case tableimport.LimitRow:
		out := say(w.Row, e.Row, b(e.Size))
		if e.Name != "" {
			out = append(out, say(w.Heavy, datum("{{"+e.Name+"}}"), e.Count, b(e.Cell))...)
		}
		return append(out, say(w.RowTail, b(e.Max))...)
	case tableimport.LimitImport:
		return say(w.Import, b(e.Size), b(e.Max))
	case tableimport.LimitTemplate:
		return say(w.Template, b(e.Size), b(e.Max))
	case tableimport.LimitLine:
		return say(w.Line, e.Row, b(e.Size), b(e.Max))
	}
	return []importPart{{Text: safetext.Line(e.Error())}}
}

// importPart is a piece of an import error as the page shows it: the
// page's words, or the operator's data (a column, the template, a file's
// part, a reader's own message) shown as written and marked
// translate="no", so neither a translator nor the zh check takes it for
// words the page left in English.
type importPart struct {
	Text string
	Data bool
}

// importDataRunes is how much of a datum an error shows: a name, or the
// header's columns, in characters (the CLI clips at 80 bytes).
const importDataRunes = 80

// datum is an argument of say that is the operator's data.
type datum string

// say is fmt.Sprintf(format, args...) in parts, each datum its own part,
// clipped to importDataRunes: every piece goes through safetext.Line, so
// neither a name nor a reader's message can break the line.
func say(format string, args ...any) []importPart {
	var data []string
	for i, a := range args {
		if d, ok := a.(datum); ok {
			// A marker NUL never survives Line, so no datum can forge one.
			args[i] = "\x00" + strconv.Itoa(len(data)) + "\x00"
			data = append(data, safetext.Line(safetext.ClipRunes(string(d), importDataRunes)))
		}
	}
	var out []importPart
	for i, s := range strings.Split(fmt.Sprintf(format, args...), "\x00") {
		switch {
		case i%2 == 1:
			n, _ := strconv.Atoi(s)
			out = append(out, importPart{Text: data[n], Data: true})
		case s != "":
			out = append(out, importPart{Text: safetext.Line(s)})
		}
	}
	return out
}

// The mapping's and the file's errors in Chinese: %s is the operator's
// data (a datum), %d a number.
var (
	importMappingZH = map[tableimport.MappingFault]string{
		tableimport.MapTemplateColumn: "模板中的 %s 不是任何一列的表头（表格的列：%s）",
		tableimport.MapTemplateOpen:   "模板中的 %s 缺少结尾的 }}",
		tableimport.MapTemplateEmpty:  "模板中的 {{}} 没有写列名",
		tableimport.MapNoColumn:       "%s列：表格中没有名为 %s 的列（表格的列：%s）",
		tableimport.MapNoContent:      "内容：请填写模板，或填写内容所在的列",
		tableimport.MapThenModel:      "然后：填写了后续任务的内容，也要选择它的模型",
	}
	// importFieldsZH are the mapping's fields as the form labels them.
	importFieldsZH = map[string]string{"content": "内容", "prompt": "提示词", "model": "模型", "priority": "优先级",
		"output": "输出文件", "follow-up": "追问", "title": "名称"}
	importTableZH = map[tableimport.TableFault]string{
		tableimport.TableUnreadable:  "无法按 %s 编码读取这个文件",
		tableimport.TableCSV:         "无法读取这个 CSV 文件",
		tableimport.TableXLSX:        "这不是可读取的 XLSX 文件",
		tableimport.TableNoSheet:     "这个 XLSX 文件里没有工作表",
		tableimport.TableEmpty:       "表格是空的：没有一行有内容",
		tableimport.TableHeaderTwice: "表头中有两列都叫 %s",
		tableimport.TableFile:        "文件有 %d MiB，超过上限 %d MiB",
		tableimport.TableZipBomb:     "XLSX 文件中的 %s 解压后远大于文件本身（压缩炸弹？），总计超过 %d MiB",
		tableimport.TableRows:        "表格超过 %d 行",
		tableimport.TableColumns:     "第 %d 行超过 %d 列",
		tableimport.TableCell:        "第 %d 行有单元格超过 %d KiB",
		tableimport.TableCells:       "到第 %d 行为止，单元格内容总计超过 %d MiB",
	}
	importXLSXRowZH = "XLSX 文件的第 %d 行无法读取" // a TableXLSX at a row
)

// importError is err as the import page shows it: a mapping's or a
// file's error from tableimport in L's language, the operator's names in
// it as data; on a page not in Chinese, or for any other error, its text.
func importError(L pageLabels, err error) []importPart {
	var me *tableimport.MappingError
	var te *tableimport.TableError
	switch {
	case L.Lang != labelsZH.Lang:
	case errors.As(err, &me) && importMappingZH[me.What] != "":
		return importMapping(me)
	case errors.As(err, &te) && importTableZH[te.What] != "":
		return importTable(te)
	}
	return []importPart{{Text: safetext.Line(err.Error())}}
}

func importMapping(e *tableimport.MappingError) []importPart {
	f, cols := importMappingZH[e.What], datum(strings.Join(e.Columns, ", "))
	switch e.What {
	case tableimport.MapTemplateColumn:
		return say(f, datum("{{"+e.Name+"}}"), cols)
	case tableimport.MapTemplateOpen:
		return say(f, datum(e.Name))
	case tableimport.MapNoColumn:
		var field any = datum(e.Field) // a field this page does not know: as tableimport names it
		if zh, ok := importFieldsZH[e.Field]; ok {
			field = zh
		}
		return say(f, field, datum(e.Name), cols)
	}
	return say("%s", f)
}

func importTable(e *tableimport.TableError) []importPart {
	f := importTableZH[e.What]
	var out []importPart
	switch e.What {
	case tableimport.TableUnreadable:
		out = say(f, datum(e.Name))
	case tableimport.TableXLSX:
		if e.Row > 0 {
			out = say(importXLSXRowZH, e.Row)
		} else {
			out = say("%s", f)
		}
	case tableimport.TableHeaderTwice:
		out = say(f, datum(e.Name))
	case tableimport.TableFile:
		out = say(f, e.Size>>20, e.Max>>20)
	case tableimport.TableZipBomb:
		out = say(f, datum(e.Name), e.Max>>20)
	case tableimport.TableRows:
		out = say(f, e.Max)
	case tableimport.TableColumns:
		out = say(f, e.Row, e.Max)
	case tableimport.TableCell:
		out = say(f, e.Row, e.Max>>10)
	case tableimport.TableCells:
		out = say(f, e.Row, e.Max>>20)
	default:
		out = say("%s", f)
	}
	// A reader's own message (a decoder's, the CSV reader's, a zip's) is
	// in its author's English: shown after the reason, as written.
	if e.Err != nil && !errors.Is(e.Err, tableimport.ErrTooLarge) {
		out = append(out, say("：%s", datum(e.Err.Error()))...)
	}
	return out
}
