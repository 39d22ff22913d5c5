package apimodel

import (
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The shipped vendor config parses, every model in it is an API model
// whose key the Executor reads at start, and the example tasks pass intake.
func TestExamples_Vendors(t *testing.T) {
	data, err := os.ReadFile("../../examples/vendors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.ParseConfig(data)
	if err != nil {
		t.Fatalf("examples/vendors.yaml: %v", err)
	}
	vars := map[string]string{}
	empty := 0
	hosts := map[string]bool{}
	for _, m := range cfg.Models {
		if m.Kind != taskfile.KindAPI || m.APIKeyEnv == "" {
			t.Errorf("model %s: want kind api with apiKeyEnv", m.Name)
		}
		vars[m.APIKeyEnv] = "key-for-" + m.APIKeyEnv
		if m.NeedEmptyPrompt {
			empty++
		}
		hosts[m.BaseURL] = true
	}
	if empty == 0 || len(hosts) < 2 {
		t.Errorf("%d needEmptyPrompt models, %d vendors; want at least 1 and 2", empty, len(hosts))
	}
	if _, err := New(cfg, env(vars)); err != nil {
		t.Errorf("New with every key set: %v", err)
	}
	if _, err := New(cfg, env(nil)); err == nil {
		t.Error("New with no keys set succeeded")
	}

	files, _ := filepath.Glob("../../examples/tasks/*.yaml")
	if len(files) < 3 {
		t.Fatalf("%d example tasks", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		task, err := taskfile.DecodeTask(data)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if want := strings.TrimSuffix(filepath.Base(f), ".yaml"); task.TaskID != want {
			t.Errorf("%s: taskId %q, want the file name %q", f, task.TaskID, want)
		}
		lane, rej := config.ResolveLane(cfg, task, "")
		if rej == nil {
			rej = config.Validate(cfg, task, lane)
		}
		if rej != nil {
			t.Errorf("%s: %v", f, rej)
		}
		if task.Batch == "" {
			t.Errorf("%s: no batch label", f)
		}
	}
}
