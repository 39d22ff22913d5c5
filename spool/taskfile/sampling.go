package taskfile

import "slices"

// Sampling is a task's own sampling settings (issue 52): what an API
// model is asked for this task in place of its config's. Each is taken
// only when the model's config lists it in requestFields; otherwise the
// task is refused, naming the field, rather than run with a setting it
// did not get. A web model takes none: its page has no such control.
type Sampling struct {
	Temperature     *float64 `yaml:"temperature,omitempty"`
	TopP            *float64 `yaml:"topP,omitempty"`
	MaxTokens       *int     `yaml:"maxTokens,omitempty"`
	Stop            []string `yaml:"stop,omitempty"`
	Seed            *int     `yaml:"seed,omitempty"`
	ReasoningEffort string   `yaml:"reasoningEffort,omitempty"`
}

// SamplingFields are the fields a model's requestFields may list, by
// their task-file names.
var SamplingFields = []string{"temperature", "topP", "maxTokens", "stop", "seed", "reasoningEffort"}

// Set lists the fields s sets, in SamplingFields' order.
func (s *Sampling) Set() []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"temperature", s.Temperature != nil}, {"topP", s.TopP != nil}, {"maxTokens", s.MaxTokens != nil},
		{"stop", len(s.Stop) > 0}, {"seed", s.Seed != nil}, {"reasoningEffort", s.ReasoningEffort != ""},
	} {
		if f.set {
			out = append(out, f.name)
		}
	}
	return out
}

// IsSamplingField reports whether name is one of SamplingFields.
func IsSamplingField(name string) bool { return slices.Contains(SamplingFields, name) }
