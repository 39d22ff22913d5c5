// Package console is a spool's operator console over HTTP: the status page
// with its timeline, the task and batch pages, /api/status and /metrics;
// read-only and open without logins configured; with them everything
// behind the login (roles.go), and by the user's role the operators'
// actions, the submit form and the table import, each in the sealed audit
// trail.
package console
