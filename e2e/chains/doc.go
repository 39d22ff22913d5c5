// Package chains holds the end-to-end tests of task chains (after: and
// {{ID.result}}): a pipeline across the web and API lanes, the refusals
// at intake, a failed parent and its retry, two daemons on one share.
//
// Each test runs `spoolgate run` (this package's test binary, see
// rig.Main) against local stand-ins; `go test ./e2e/chains` runs them alone.
package chains
