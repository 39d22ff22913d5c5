package frontdoor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
)

// Every field of a chat-completions request is honoured or refused by
// name (issue 52): a field accepted and not used gives the caller an
// answer of a shape it did not ask for and cannot see (a temperature it
// believes was applied, JSON it believes was enforced). A task runs with
// its model's settings, so the sampling fields, log probabilities and
// tools are refused with a 400 that names the field, until the door can
// honour them; response_format is honoured (a task's schema). A field set
// to null (or to the value that asks for nothing: logprobs false,
// parallel_tool_calls with no tools) is not a request and passes.

// honoured are the fields the door uses (parseChat), and `user`, the
// caller's own end-user id for its records, which asks nothing of the
// answer.
var honoured = []string{"model", "messages", "stream", "stream_options", "n", "tools", "functions", "user", "response_format"}

// refusedWhy says, for the fields the OpenAI API knows and the door does
// not honour, why.
var refusedWhy = map[string]string{
	"temperature":           "per-request sampling is not supported: a task runs with its model's settings",
	"top_p":                 "per-request sampling is not supported: a task runs with its model's settings",
	"max_tokens":            "a per-request answer length is not supported: a task runs with its model's settings",
	"max_completion_tokens": "a per-request answer length is not supported: a task runs with its model's settings",
	"stop":                  "stop sequences are not supported: a task's answer is the model's whole answer",
	"seed":                  "a per-request seed is not supported: a task runs with its model's settings",
	"reasoning_effort":      "a per-request reasoning effort is not supported: a task runs with its model's settings",
	"frequency_penalty":     "per-request sampling is not supported: a task runs with its model's settings",
	"presence_penalty":      "per-request sampling is not supported: a task runs with its model's settings",
	"logit_bias":            "per-request sampling is not supported: a task runs with its model's settings",
	"logprobs":              "log probabilities are not available: a web model's page shows none",
	"top_logprobs":          "log probabilities are not available: a web model's page shows none",
	"tool_choice":           "tools are not supported: a task is one prompt and one answer",
	"function_call":         "functions are not supported: a task is one prompt and one answer",
	"parallel_tool_calls":   "tools are not supported: a task is one prompt and one answer",
	"modalities":            "only text answers are supported",
	"audio":                 "only text answers are supported",
	"prediction":            "predicted outputs are not supported",
	"service_tier":          "a service tier is not supported: a task runs on its model's lane",
	"store":                 "stored completions are not supported",
	"metadata":              "stored completions are not supported",
	"web_search_options":    "web search options are not supported: a web model's search is its site's mode",
	"verbosity":             "a per-request verbosity is not supported: a task runs with its model's settings",
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
