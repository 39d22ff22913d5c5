// Package console is a spool's operator console over HTTP: the status page
// with its timeline, the task and batch pages, /api/status and /metrics;
// read-only without a login, and with one the operators' actions, the
// submit form and the table import, each in the sealed audit trail.
package console
