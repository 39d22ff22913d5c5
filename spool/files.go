package spool

import (
	"os"
	"sync"
)

// files are the durable-write primitives of one spool (fsops.go): the tag
// its temps are named with (see tempfiles.go) and the root below which
// every folder is guarded. Each Store has its own, so building a Store
// changes nothing elsewhere in the process; the package-level functions
// use plainFiles.
type files struct {
	root string // "": no folder is guarded
	tag  string // hostTag of the host the temps are named for
	// spares are the Store's spare temps (spares.go); nil: none kept.
	spares *spares
	// folders are the folders below root its guards verified
	// (folderid.go); nil: none kept.
	folders *folderIDs
}

// plainFiles are the primitives outside any Store: temps named for
// os.Hostname, no folder guarded.
var plainFiles = sync.OnceValue(func() files {
	h, _ := os.Hostname()
	return files{tag: hostTag(h)}
})
