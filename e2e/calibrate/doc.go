// Package calibrate holds the end-to-end tests of calibration: `site new`
// and `check --suggest` on the bundled chat UIs, on pages whose classes
// change on every load and on reasoning pages, each proposal then run
// through `spoolgate run`.
//
// Each test runs `spoolgate run` (this package's test binary, see
// rig.Main) against local stand-ins; `go test ./e2e/calibrate` runs them
// alone.
package calibrate
