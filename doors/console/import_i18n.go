package console

import (
	"fmt"

	"github.com/spoolgate/spoolgate/doors/tableimport"
)

// importLimits are the import's refusals for size in the page's language:
// the reason names what would grow past which limit, on one line.
type importLimits struct {
	Row, Heavy, Import, Line, Template string
}

var (
	importLimitsEN = importLimits{
		Row:      "the template would fill row %d to %s%s, more than the %s a task may hold",
		Heavy:    " ({{%s}} %d times × %s)",
		Import:   "the rows would fill to %s in all, more than the %s an import may hold",
		Line:     "line %d of the CSV is %s long, more than the %s a line may be",
		Template: "the template is %s, more than the %s a task may hold",
	}
	importLimitsZH = importLimits{
		Row:      "模板会把第 %d 行填到 %s%s，超过一个任务最多能有的 %s",
		Heavy:    "（{{%s}} 出现 %d 次 × %s）",
		Import:   "所有行填好后共 %s，超过一次导入最多能有的 %s",
		Line:     "CSV 第 %d 行长 %s，超过一行最多能有的 %s",
		Template: "模板本身有 %s，超过一个任务最多能有的 %s",
	}
)

// importLimit is e's reason in L's language.
func importLimit(L pageLabels, e *tableimport.LimitError) string {
	w := importLimitsEN
	if L.Lang == labelsZH.Lang {
		w = importLimitsZH
	}
	b := tableimport.Bytes
	switch e.What {
	case tableimport.LimitRow:
		heavy := ""
		if e.Name != "" {
			heavy = fmt.Sprintf(w.Heavy, e.Name, e.Count, b(e.Cell))
		}
		return fmt.Sprintf(w.Row, e.Row, b(e.Size), heavy, b(e.Max))
	case tableimport.LimitImport:
		return fmt.Sprintf(w.Import, b(e.Size), b(e.Max))
	case tableimport.LimitTemplate:
		return fmt.Sprintf(w.Template, b(e.Size), b(e.Max))
	case tableimport.LimitLine:
		return fmt.Sprintf(w.Line, e.Row, b(e.Size), b(e.Max))
	}
	return e.Error()
}
