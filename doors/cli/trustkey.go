package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/seal"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// useKey loads the installation key beside the config (seal.PathFor) and
// gives it to the process's one Store. The daemon creates it on first
// start (create); the other commands only read it: without it, records
// are shown unchecked and nothing is sealed, and the returned note says
// why ("" when seals are checked).
func useKey(st *spool.Store, create bool, log *slog.Logger) (string, error) {
	p := seal.PathFor(st.Cfg.Path)
	if create {
		k, created, err := seal.LoadOrCreate(p)
		if err != nil {
			return "", err
		}
		if created && log != nil {
			log.Warn("installation key created: copy it (mode 0600) beside the config of every other host of this spool", "key", p)
		}
		st.Seal = k
		return "", nil
	}
	k, err := seal.Load(p)
	if err != nil {
		note := "seals not checked: " + err.Error()
		if errors.Is(err, fs.ErrNotExist) {
			note = "seals not checked: no installation key at " + p
		}
		st.Seal = &seal.Key{}
		return note, err
	}
	st.Seal = k
	return "", nil
}

// hasCoordination reports whether the spool holds coordination state a
// daemon seals (a lease or hold file, notify/): only then does it matter
// to status that seals cannot be checked.
func hasCoordination(l spool.Layout) bool {
	if _, err := os.Lstat(filepath.Join(l.Root, "notify")); err == nil {
		return true
	}
	names, _ := fsx.ReadDirNames(l.Accounts())
	for _, n := range names {
		if strings.Contains(n, spool.LeaseExt) || strings.HasSuffix(n, taskfile.HeldExt) {
			return true
		}
	}
	return false
}

// installKey creates the installation key beside the service's config
// (service install), owned by the service's user so the daemon can read
// it. It returns the key's path and whether it created it.
func installKey(configPath, user string) (string, bool, error) {
	if configPath == "" {
		configPath = config.DefaultConfigFile
	}
	p := seal.PathFor(configPath)
	_, created, err := seal.LoadOrCreate(p)
	if err != nil {
		return p, false, err
	}
	if created && user != "" {
		if err := fsx.ChownToUser(p, user); err != nil {
			return p, created, fmt.Errorf("%s: chown to %s: %w", p, user, err)
		}
	}
	return p, created, nil
}
