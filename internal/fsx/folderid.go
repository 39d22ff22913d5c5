package fsx

import (
	"path/filepath"
	"strings"
	"sync"
)

// FolderIDs are the folders below a spool's root that a walk following
// no link reached, each by what makes it that folder and not another of
// its name (folderid_linux.go). guardDir then finds a folder it verified
// by one stat of its path, where the walk takes one a level (a task's
// moves and rewrites guard eleven folders: the lane's own folder was
// stat'ed thirteen times a task). A path that resolves to the very folder
// the walk reached, by whatever route, leads into that folder: a folder
// swapped for a symlink, or for another folder, resolves to something else
// and is walked again, and refused. Where the file system tells no birth
// time (folderid_other.go), nothing is cached and every guard walks.
type FolderIDs struct {
	mu sync.Mutex
	m  map[string]folderID
}

// maxFolderIDs bounds the cache: a spool has a few dozen folders; past
// this many (outputs in folders of their own), it starts again.
const maxFolderIDs = 1024

func NewFolderIDs() *FolderIDs { return &FolderIDs{m: map[string]folderID{}} }

// Holds reports whether dir resolves, now, to the folder a walk reached.
func (c *FolderIDs) Holds(dir string) bool {
	if c == nil {
		return false
	}
	id, ok := folderIDAt(dir)
	if !ok {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	known, ok := c.m[dir]
	return ok && known == id
}

// Learn records dir, below root, as the folder that an openat walk from
// root reaches (never following a link): the folder's identity comes from
// the open folder itself, so a swap during the guard's own walk cannot be
// learned.
func (c *FolderIDs) Learn(root, dir string) {
	if c == nil {
		return
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return
	}
	id, ok := folderIDBeneath(root, strings.Split(rel, string(filepath.Separator)))
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxFolderIDs {
		clear(c.m)
	}
	c.m[dir] = id
}
