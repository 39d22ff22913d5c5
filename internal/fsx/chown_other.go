//go:build !unix

package fsx

// ChownToUser: on Windows the service account reads a file through its
// folder's ACL; nothing to change here.
func ChownToUser(p, name string) error { return nil }
