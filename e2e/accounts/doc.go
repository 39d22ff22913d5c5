// Package accounts holds the end-to-end tests of web accounts: several
// sessions, paced accounts, each prompt sent once across crashes, proxies,
// signing in from the console's live view.
//
// Each test runs `spoolgate run` (this package's test binary, see
// rig.Main) against local stand-ins; `go test ./e2e/accounts` runs them
// alone.
package accounts
