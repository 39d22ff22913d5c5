// Package web holds the end-to-end tests of reading answers from chat
// pages: stream protocols, the DOM as rendered, reasoning, calibration (site
// new, check --suggest), attachments and generated files, hostile pages.
//
// Each test runs `spoolgate run` (this package's test binary, see
// rig.Main) against local stand-ins; `go test ./e2e/web` runs them alone.
package web
