//go:build !unix

package main

// chownToUser: on Windows the service account reads the key through the
// folder's ACL; nothing to change here.
func chownToUser(p, name string) error { return nil }
