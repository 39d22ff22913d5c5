// Package doors holds the end-to-end tests of the doors: the
// OpenAI-compatible front door with the official SDK, the console and its
// rights, the audit trail, imports, the status page's timeline, and the
// secrets sweep over everything a signed-in browser may leave.
//
// Each test runs `spoolgate run` (this package's test binary, see
// rig.Main) against local stand-ins; `go test ./e2e/doors` runs them alone.
package doors
