// Package console is a spool's operator console over HTTP: the status page
// with its timeline, the task and batch pages, /api/status and /metrics,
// read-only today and the place where actions and an API will go.
package console
