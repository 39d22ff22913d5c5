package console

import (
	"reflect"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/status"
	"github.com/spoolgate/spoolgate/spool/status/timeline"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Every label of the timeline and the detail pages exists in both
// languages, and the Chinese ones are translations, not copies.
func TestDetailLabels_BothLanguages(t *testing.T) {
	same := map[string]bool{"CSV": true, "JSONL": true} // names, not words
	for _, pair := range [][2]any{{detailEN, detailZH}, {timeline.LabelsEN, timeline.LabelsZH}} {
		en, zh := reflect.ValueOf(pair[0]), reflect.ValueOf(pair[1])
		for i := range en.NumField() {
			name := en.Type().Field(i).Name
			e, z := en.Field(i), zh.Field(i)
			switch e.Kind() {
			case reflect.String:
				if e.String() == "" || z.String() == "" || (e.String() == z.String() && !same[name]) {
					t.Errorf("%s: %q / %q", name, e.String(), z.String())
				}
			case reflect.Map:
				if name == "Classes" { // English shows a class as the files spell it
					for _, c := range []taskfile.ErrorClass{taskfile.ClassInvalid, taskfile.ClassDuplicate, taskfile.ClassTransient, taskfile.ClassPermanent,
						taskfile.ClassStale, taskfile.ClassAccount, taskfile.ClassEnvironment, taskfile.ClassCanceled, taskfile.ClassParent, taskfile.ClassSchema} {
						if z.MapIndex(reflect.ValueOf(string(c))).String() == "" {
							t.Errorf("class %s has no Chinese word", c)
						}
					}
					continue
				}
				if e.Len() == 0 || e.Len() != z.Len() {
					t.Errorf("%s: %d / %d entries", name, e.Len(), z.Len())
				}
				for _, k := range e.MapKeys() {
					if zv := z.MapIndex(k); !zv.IsValid() || zv.String() == "" || zv.String() == e.MapIndex(k).String() {
						t.Errorf("%s[%v]: %v / %v", name, k, e.MapIndex(k), zv)
					}
				}
			}
		}
	}
	for _, o := range timeline.Outcomes {
		if detailEN.Outcomes[string(o)] == "" || detailZH.Outcomes[string(o)] == "" {
			t.Errorf("outcome %s has no word", o)
		}
	}
}

func TestEtaText(t *testing.T) {
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.Local)
	at, secs, zero := now.Add(90*time.Second), 90.0, 0.0
	for _, tc := range []struct {
		name  string
		l     pageLabels
		e     status.ETA
		basis bool
		want  string
	}{
		{"en as report", labelsEN, status.ETA{Seconds: &zero}, false, "done"},
		{"zh done", labelsZH, status.ETA{Seconds: &zero}, false, "已完成"},
		{"zh paused", labelsZH, status.ETA{Note: "lane paused"}, false, "未知（通道已暂停）"},
		{"zh time", labelsZH, status.ETA{Seconds: &secs, At: &at, Samples: 3, TypicalSeconds: 41}, true, "1m30s（10:01:30）；通常 41s：最近 3 次成功的中位数"},
		{"zh default", labelsZH, status.ETA{Seconds: &zero, TypicalSeconds: 120}, true, "已完成；通常 2m00s：默认值，尚无成功记录"},
		{"zh excludes", labelsZH, status.ETA{Note: "excludes 2 tasks of disabled or held accounts"}, false, "未知（不含停用或暂停账号的 2 个任务）"},
		{"en overdue", labelsEN, status.ETA{Seconds: &zero, Note: status.OverdueNote}, false, "due now (running longer than typical)"},
		{"zh overdue", labelsZH, status.ETA{Seconds: &zero, Note: status.OverdueNote}, false, "即将完成（运行时间已超过通常用时）"},
		{"en done but held", labelsEN, status.ETA{Seconds: &zero, Note: "excludes 1 task held by a disabled account"}, false, "done (excludes 1 task held by a disabled account)"},
	} {
		if got := etaText(tc.l, now, tc.e, tc.basis); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestActionLabels_DetailWords(t *testing.T) {
	for _, tc := range []struct{ en, zh string }{
		{"bulk: 5 of 5", "批量：5 / 5"},
		{"high, bulk: 2 of 3", "高，批量：2 / 3"},
		{"3 of 4", "3 / 4"}, {"30 rows, 1 refused", "30 行，拒收 1 行"},
		{"running", "运行中"},
		{"web host runner-1", "web 主机 runner-1"},
		{"account a1", "账号 a1"},
		{"api", "api"},
	} {
		if got := actionsEN.detailWords(tc.en); got != tc.en {
			t.Errorf("en %q became %q", tc.en, got)
		}
		if got := actionsZH.detailWords(tc.en); got != tc.zh {
			t.Errorf("zh %q: %q, want %q", tc.en, got, tc.zh)
		}
	}
}
