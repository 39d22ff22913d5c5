// Package mdlinks holds the test that every relative link and anchor in the
// repository's Markdown resolves, inside the repository. It has no code.
package mdlinks
