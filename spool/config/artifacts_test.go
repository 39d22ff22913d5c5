package config

import (
	"strings"
	"testing"
)

// artifacts: and endpoint: are checked at start-up, each with a one-line
// reason naming the key.
func TestConfig_Artifacts(t *testing.T) {
	const api = "models: [{name: p, kind: api, baseURL: 'http://127.0.0.1:9/v1'%s}]\n"
	cfg, err := ParseConfig([]byte("artifacts: {maxFileSize: 5MB, maxTaskSize: 1GB, optional: true}\n" + strings.Replace(api, "%s", ", endpoint: images", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Artifacts.MaxFile() != 5<<20 || cfg.Artifacts.MaxTask() != 1<<30 || !cfg.Artifacts.Optional || cfg.Models[0].Endpoint != EndpointImages {
		t.Errorf("artifacts %+v, endpoint %q", cfg.Artifacts, cfg.Models[0].Endpoint)
	}
	def, err := ParseConfig([]byte(strings.Replace(api, "%s", "", 1)))
	if err != nil || def.Artifacts.MaxFile() != 20<<20 || def.Artifacts.MaxTask() != 100<<20 {
		t.Errorf("defaults: %+v %v", def.Artifacts, err)
	}
	for _, tt := range []struct{ yaml, want string }{
		{"artifacts: {maxFileSize: 20 MiB}\n", `artifacts.maxFileSize: "20 MiB" is not a size`},
		{"artifacts: {maxTaskSize: -1}\n", `artifacts.maxTaskSize: "-1" is not a size`},
		{"artifacts: {maxFileSize: 2MB, maxTaskSize: 1MB}\n", "artifacts.maxFileSize: 2097152 bytes is more than artifacts.maxTaskSize"},
		{strings.Replace(api, "%s", ", endpoint: video", 1), `models[p].endpoint: "video": want chat (the default) or images`},
		{"sites: {s: {url: 'http://127.0.0.1:9/', input: a, send: b, answer: c}}\nmodels: [{name: w, kind: web, site: s, endpoint: images}]\n", "models[w].endpoint: only an api model has an endpoint"},
	} {
		_, err := ParseConfig([]byte(tt.yaml))
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want %q on one line", tt.yaml, err, tt.want)
		}
	}
}
