package config

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/user"
	"path/filepath"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// WebConcurrency is how many tasks one web session runs at once. It is 1,
// always, and not a setting: see the guarantee in spool/runnerlock.go. The web lane runs one
// session per account, so its parallelism comes only from more accounts.
const WebConcurrency = 1

// Concurrency is how many tasks lane k runs at once under cfg: for the web
// lane, WebConcurrency per session.
func Concurrency(cfg *Config, k taskfile.Kind) int {
	if k == taskfile.KindWeb {
		return WebConcurrency * max(1, len(cfg.WebSessions()))
	}
	return cfg.API.Concurrency
}

// RunnerLockPath is the lock file of the web session in profiles:
// web-runner-<h>.lock, h = first 12 hex digits of SHA-256 of the OS user
// name, so two instances of one user never drive one session at once.
// It is the lock of the first web session (see Config.WebSessions).
func RunnerLockPath(profiles string) string {
	return filepath.Join(profiles, "web-runner-"+userHash()+".lock")
}

// sessionLockPath is the lock file of the web session of account, other
// than the first: web-runner-<h>-<account>.lock.
func sessionLockPath(profiles, account string) string {
	return filepath.Join(profiles, "web-runner-"+userHash()+"-"+account+".lock")
}

func userHash() string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	} else if v := os.Getenv("USER"); v != "" {
		name = v
	}
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])[:12]
}
