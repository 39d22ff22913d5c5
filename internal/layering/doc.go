// Package layering holds the tests of the module's build: which package
// may depend on which (see docs/architecture.md), the files' shape, and
// that every package builds for Windows and macOS. It has no code.
package layering
