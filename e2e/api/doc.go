// Package api holds the end-to-end tests of the API lane: quotas, answer
// shapes, notifications, structured output against the API stand-in.
//
// Each test runs `spoolgate run` (this package's test binary, see
// rig.Main) against local stand-ins; `go test ./e2e/api` runs them alone.
package api
