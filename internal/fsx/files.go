package fsx

import (
	"os"
	"path/filepath"
	"sync"
)

// Files are the durable-write primitives of one spool (fsops.go): the tag
// its temps are named with (see tempfiles.go) and the root below which
// every folder is guarded. Each Store has its own, so building a Store
// changes nothing elsewhere in the process; the package-level functions
// use Plain.
type Files struct {
	Root string // "": no folder is guarded
	Tag  string // HostTag of the host the temps are named for
	// Spares are the spool's spare temps (spares.go); nil: none kept.
	Spares *Spares
	// Folders are the folders below Root its guards verified
	// (folderid.go); nil: none kept.
	Folders *FolderIDs
}

// NewFiles returns the primitives of the spool at root, their temps named
// for host, keeping spares and the folders their guards verified.
func NewFiles(root, host string) Files {
	return Files{Root: filepath.Clean(root), Tag: HostTag(host), Spares: NewSpares(), Folders: NewFolderIDs()}
}

// Plain are the primitives outside any spool: temps named for
// os.Hostname, no folder guarded.
var Plain = sync.OnceValue(func() Files {
	h, _ := os.Hostname()
	return Files{Tag: HostTag(h)}
})
