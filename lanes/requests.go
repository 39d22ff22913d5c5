package lanes

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// errNotPlainRequest and errBadRequestName say why an entry of a request
// folder (cancel/, priority/) is ignored.
var (
	errNotPlainRequest = errors.New("not a plain file: ignored (a request is an empty file named after a taskId)")
	errBadRequestName  = errors.New("not a taskId: ignored")
)

// plainRequest reports whether the entry name of request folder w is a
// request to act on: a regular file named after a taskId. Anything else
// (a folder, a fifo, a symlink, a hostile name) is ignored and left where
// it is, logged once per entry and cause, then counted: never two errors
// at every rescan for ever.
func (d *Daemon) plainRequest(w spool.WatchDir, name string) bool {
	p := filepath.Join(w.Path, name)
	key := "request:" + p
	var why error
	if !taskfile.ValidTaskID(name) {
		why = errBadRequestName
	} else if fi, err := os.Lstat(p); err != nil {
		d.Store.Limiter().Forget(key)
		return false // gone meanwhile: nothing to do
	} else if !fi.Mode().IsRegular() {
		why = errNotPlainRequest
	}
	if why != nil {
		d.Store.Limiter().Fail(key, "request folder entry ignored", why, "lane", w.Lane, "file", name)
		return false
	}
	d.Store.Limiter().Forget(key)
	return true
}
