package console

import (
	"fmt"
	"html/template"

	"github.com/spoolgate/spoolgate/spool/status"
)

// outcomeBar draws a batch's or a lane's finished tasks by outcome:
// success green, failed red, canceled grey, left to right, the rest of the
// bar (pending and running) empty. A batch whose tasks all failed then
// reads as failed, not as a full green bar.
func outcomeBar(kind, name string, c status.Counts) template.HTML {
	seg := func(class string, n int) string {
		if n == 0 || c.Total == 0 {
			return ""
		}
		return fmt.Sprintf(`<span class="%s" style="width:%.2f%%"></span>`, class, 100*float64(n)/float64(c.Total))
	}
	return template.HTML(fmt.Sprintf(`<span class="bar" data-kind="%s" data-name="%s" data-finished="%d" data-total="%d" data-failed="%d">%s%s%s</span>`, //nolint:gosec // name escaped below
		template.HTMLEscapeString(kind), template.HTMLEscapeString(name), c.Finished(), c.Total, c.Failed,
		seg("fill", c.Success), seg("fill fail", c.Failed), seg("fill cancel", c.Canceled)))
}

// barCSS: the segments sit side by side in the bar.
const barCSS = `.bar{display:inline-flex}.bar .fill{flex:none}.fill.fail{background:#c62828}.fill.cancel{background:#9e9e9e}.failed-num{color:#c62828;font-weight:bold}`
