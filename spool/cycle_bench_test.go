package spool

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// BenchmarkStore_TaskCycle: one task's whole file work, one after another:
// intake of a renamed drop, claim, mark, finish. For profiles (go test
// -cpuprofile, strace -c); make bench measures the rates against the disk.
func BenchmarkStore_TaskCycle(b *testing.B) {
	cfg, err := config.ParseConfig([]byte("spool: " + filepath.Join(b.TempDir(), "spool") + "\nmodels:\n  - {name: fast, kind: api, baseURL: \"http://127.0.0.1:9/v1\"}\n"))
	if err != nil {
		b.Fatal(err)
	}
	s := NewStore(cfg, nil)
	if err := s.Layout.Create(); err != nil {
		b.Fatal(err)
	}
	k := taskfile.KindAPI
	in := s.Layout.Lane(k, taskfile.DirIncoming)
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("c-%06d", i)
		i++
		data, _ := (&taskfile.Task{TaskID: id, Model: "fast", Content: "Write launch copy " + id + "."}).Encode()
		tmp := filepath.Join(in, "."+id+".tmp")
		if err := os.WriteFile(tmp, data, 0o640); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(in, id+".yaml")); err != nil {
			b.Fatal(err)
		}
		if res, err := s.Intake(in, id+".yaml", k); err != nil || res.Outcome != Accepted {
			b.Fatalf("intake: %+v %v", res, err)
		}
		l, err := s.Claim(k, id, "bench:1")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := l.Mark(time.Now()); err != nil {
			b.Fatal(err)
		}
		if _, err := l.Finish(Outcome{State: taskfile.StateSuccess, Result: "ok"}, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}
