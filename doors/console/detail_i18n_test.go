package console

import (
	"reflect"
	"testing"

	"github.com/spoolgate/spoolgate/spool/status/timeline"
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
