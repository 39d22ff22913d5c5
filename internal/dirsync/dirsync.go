// Package dirsync makes a folder's entries durable: the fsync of the folder
// itself that a create, a rename or a removal in it needs to survive a
// power cut, written once for every OS.
package dirsync

import "os"

// Path opens the folder dir (following a symlink: callers that must not
// follow one open the folder themselves and call File) and syncs it.
func Path(dir string) error {
	if !canSync {
		return nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return File(f)
}
