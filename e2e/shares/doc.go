// Package shares holds the end-to-end tests of the spool under stress:
// crashes and kills, several hosts on one share (bindfs, Samba), foreign and
// hostile writers, planted coordination files (the reliability suite).
//
// Each test runs `spoolgate run` (this package's test binary, see
// rig.Main) against local stand-ins; `go test ./e2e/shares` runs them
// alone.
package shares
