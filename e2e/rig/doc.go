// Package rig is what the end-to-end packages (e2e/...) share: the daemon
// rig (a spool, its config, `spoolgate run` processes of the test binary
// itself), the stand-ins they start (the API endpoint, chat pages signed
// in per profile, a webhook receiver) and the fakes of the reliability
// runs.
//
// The end-to-end tests run the real daemon as a subprocess with its REAL
// executors: apimodel against examples/apistand and a real headless
// Chromium against examples/chatstand; SPOOLGATE_FAKE is removed from its
// environment unless a test asks for the fakes (Opts.Fake).
package rig
