package frontdoor

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Every field of a chat-completions request is honoured or refused by
// name (issue 52): a field accepted and not used gives the caller an
// answer of a shape it did not ask for and cannot see (a temperature it
// believes was applied, JSON it believes was enforced). A task runs with
// its model's settings: the sampling fields are the task's own where the
// model's config allows them (requestFields) and refused by name where it
// does not (samplingOf, Door.chat); log probabilities and tools are
// refused with a 400 that names the field; response_format is honoured
// (a task's schema). A field set
// to null (or to the value that asks for nothing: logprobs false,
// parallel_tool_calls with no tools) is not a request and passes.

// honoured are the fields the door uses (parseChat), and `user`, the
// caller's own end-user id for its records, which asks nothing of the
// answer.
var honoured = []string{"model", "messages", "stream", "stream_options", "n", "tools", "functions", "user", "response_format",
	"temperature", "top_p", "max_tokens", "max_completion_tokens", "stop", "seed", "reasoning_effort"} // sampling: see samplingOf

// refusedWhy says, for the fields the OpenAI API knows and the door does
// not honour, why.
var refusedWhy = map[string]string{
	"frequency_penalty":   "per-request sampling is not supported: a task runs with its model's settings",
	"presence_penalty":    "per-request sampling is not supported: a task runs with its model's settings",
	"logit_bias":          "per-request sampling is not supported: a task runs with its model's settings",
	"logprobs":            "log probabilities are not available: a web model's page shows none",
	"top_logprobs":        "log probabilities are not available: a web model's page shows none",
	"tool_choice":         "tools are not supported: a task is one prompt and one answer",
	"function_call":       "functions are not supported: a task is one prompt and one answer",
	"parallel_tool_calls": "tools are not supported: a task is one prompt and one answer",
	"modalities":          "only text answers are supported",
	"audio":               "only text answers are supported",
	"prediction":          "predicted outputs are not supported",
	"service_tier":        "a service tier is not supported: a task runs on its model's lane",
	"store":               "stored completions are not supported",
	"metadata":            "stored completions are not supported",
	"web_search_options":  "web search options are not supported: a web model's search is its site's mode",
	"verbosity":           "a per-request verbosity is not supported: a task runs with its model's settings",
}

// asksNothing are the values of refused fields that ask for nothing.
var asksNothing = map[string][]string{
	"logprobs":            {"false"},
	"parallel_tool_calls": {"true", "false"},
	"store":               {"false"},
}

// checkFields refuses, by name, the first field of body (in name order,
// so the answer does not depend on the client's key order) that the
// door does not honour.
func checkFields(body []byte) *apiError {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil // parseChat says what is wrong with the body
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := bytes.TrimSpace(fields[k])
		if slices.Contains(honoured, k) || string(v) == "null" {
			continue
		}
		if why, known := refusedWhy[k]; known {
			var compact bytes.Buffer
			if json.Compact(&compact, v) == nil && slices.Contains(asksNothing[k], compact.String()) {
				continue
			}
			return badRequest(k, fmt.Sprintf("%s is not honoured: %s", k, why))
		}
		return badRequest(k, fmt.Sprintf("%s: an unknown field; the door honours %v", k, honoured))
	}
	return nil
}

// samplingFields maps the OpenAI request's sampling fields to a task's.
var samplingFields = map[string]string{
	"temperature": "temperature", "top_p": "topP", "max_tokens": "maxTokens", "max_completion_tokens": "maxTokens",
	"stop": "stop", "seed": "seed", "reasoning_effort": "reasoningEffort",
}

// samplingOf reads the request's sampling fields into a task's Sampling
// (nil when it sets none) and the OpenAI name of each field it set, by
// the task's name (to name it in a refusal).
func samplingOf(body []byte) (*taskfile.Sampling, map[string]string, *apiError) {
	var req struct {
		Temperature         *float64        `json:"temperature"`
		TopP                *float64        `json:"top_p"`
		MaxTokens           *int            `json:"max_tokens"`
		MaxCompletionTokens *int            `json:"max_completion_tokens"`
		Stop                json.RawMessage `json:"stop"`
		Seed                *int            `json:"seed"`
		ReasoningEffort     *string         `json:"reasoning_effort"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, nil, badRequest(te.Field, fmt.Sprintf("%s: want a %s", te.Field, te.Type))
		}
		return nil, nil, nil // parseChat says what is wrong with the body
	}
	s := &taskfile.Sampling{Temperature: req.Temperature, TopP: req.TopP, Seed: req.Seed}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(body, &fields) // it decoded above
	names := map[string]string{}
	for openai, task := range samplingFields {
		if v, ok := fields[openai]; ok && string(bytes.TrimSpace(v)) != "null" {
			names[task] = openai
		}
	}
	s.MaxTokens = cmp.Or(req.MaxCompletionTokens, req.MaxTokens)
	if req.ReasoningEffort != nil {
		s.ReasoningEffort = *req.ReasoningEffort
	}
	if st := bytes.TrimSpace(req.Stop); len(st) > 0 && string(st) != "null" {
		var one string
		if json.Unmarshal(st, &one) == nil {
			s.Stop = []string{one}
		} else if json.Unmarshal(st, &s.Stop) != nil {
			return nil, nil, badRequest("stop", "stop: want a string or a list of strings")
		}
	}
	if len(s.Set()) == 0 {
		return nil, nil, nil
	}
	return s, names, nil
}
