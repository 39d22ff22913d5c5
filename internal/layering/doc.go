// Package layering holds the test of the module's import rules: which
// package may depend on which (see docs/architecture.md). It has no code.
package layering
