// Package layering holds the test of the module's import rules: which
// package may depend on which (see the README's layout). It has no code.
package layering
