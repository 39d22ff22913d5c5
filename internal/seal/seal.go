// Package seal tells the spool's coordination state that a daemon of this
// installation wrote from a file anyone else with write access to a shared
// spool planted. The spool is a shared folder: colleagues and their scripts
// may write anywhere in it, but not beside the config. So each installation
// has a secret key kept beside its config (mode 0600, copied to every host
// of one spool), and every record a daemon acts on later (account leases,
// daemon-written holds, notify markers and `since`) carries an HMAC-SHA256
// of its kind, its file name and its bytes under that key. A record whose
// seal is missing or wrong is foreign: it is never acted on and never
// deleted.
//
// The file name is part of what is sealed, so a genuine record copied or
// renamed to another name (a lease to a higher generation, a marker to
// another batch) is foreign too.
package seal

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spoolgate/spoolgate/internal/dirsync"
)

// FileName is the key file's name beside the config.
const FileName = "spoolgate.key"

// keyBytes is the key's length: as long as the HMAC's hash.
const keyBytes = 32

// trailer starts the seal line that ends a sealed record. It starts with
// '#' so that a sealed YAML record still parses as YAML.
const trailer = "#sg-seal v1 "

// Trailer starts a seal line; a record kept on one line (an audit entry)
// carries it after a tab.
const Trailer = trailer

// ErrUnsealed: the record has no seal line (planted, or written by a
// spoolgate from before seals).
var ErrUnsealed = errors.New("no seal: not written by a daemon of this installation")

// ErrBadSeal: the record's seal does not match (another installation's
// key, a record edited, copied or renamed).
var ErrBadSeal = errors.New("seal does not match: not written by a daemon of this installation under this name")

// ErrNoKey: there is no key to check seals with (status on a machine
// without the installation's key file).
var ErrNoKey = errors.New("no installation key: seals cannot be checked")

// Key is an installation's secret. The zero value and nil have no key:
// Seal and Open fail with ErrNoKey.
type Key struct {
	k    []byte
	path string
}

// Path is where the key was read from ("" for an in-memory key).
func (k *Key) Path() string {
	if k == nil {
		return ""
	}
	return k.path
}

// PathFor is the key file of the installation whose config is configPath:
// beside it. Without a config file it is <user config dir>/spoolgate/.
func PathFor(configPath string) string {
	if configPath != "" {
		if abs, err := filepath.Abs(configPath); err == nil {
			configPath = abs
		}
		return filepath.Join(filepath.Dir(configPath), FileName)
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		dir = "."
	}
	return filepath.Join(dir, "spoolgate", FileName)
}

// Load reads the key file at path. A key file that others than its owner
// may read is refused (on Unix): whoever reads it can forge records.
func Load(path string) (*Key, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("installation key: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("installation key %s: not a regular file", path)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("installation key %s: mode %04o lets others read it: chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("installation key: %w", err)
	}
	k, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(k) != keyBytes {
		return nil, fmt.Errorf("installation key %s: want %d hex digits", path, 2*keyBytes)
	}
	return &Key{k: k, path: path}, nil
}

// LoadOrCreate reads the key file at path, creating it (mode 0600, a new
// random key) when there is none. created reports whether it did.
func LoadOrCreate(path string) (k *Key, created bool, err error) {
	k, err = Load(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, false, err
	}
	raw := make([]byte, keyBytes)
	if _, err := rand.Read(raw); err != nil {
		return nil, false, fmt.Errorf("installation key: %w", err)
	}
	// O_EXCL: of two processes starting at once, one key wins and the
	// other reads it.
	if err := writeNew(path, raw); errors.Is(err, fs.ErrExist) {
		k, err = Load(path)
		return k, false, err
	} else if err != nil {
		return nil, false, fmt.Errorf("installation key: %w", err)
	}
	return &Key{k: raw, path: path}, true, nil
}

// New returns an in-memory key (tests, and a process that shares a spool
// with nobody else).
func New() *Key {
	raw := make([]byte, keyBytes)
	_, _ = rand.Read(raw)
	return &Key{k: raw}
}

// FromBytes makes a key of raw (32 bytes), for tests that start several
// daemons of one installation.
func FromBytes(raw []byte) (*Key, error) {
	if len(raw) != keyBytes {
		return nil, fmt.Errorf("installation key: want %d bytes, got %d", keyBytes, len(raw))
	}
	return &Key{k: bytes.Clone(raw)}, nil
}

// Write writes the key to path, mode 0600, refusing to replace a file
// (service install, and tests that give hosts one key).
func (k *Key) Write(path string) error {
	if k == nil || len(k.k) == 0 {
		return ErrNoKey
	}
	return writeNew(path, k.k)
}

// writeNew creates the key file path (and its folder), mode 0600, holding
// raw in hex; it never replaces a file (fs.ErrExist). A file it created
// but could not finish is removed.
func writeNew(path string, raw []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(hex.EncodeToString(raw) + "\n")
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = os.Remove(path) // our own half-written file
		return werr
	}
	// The new name is durable only once its folder is: a key lost to a
	// power cut would be made again at the next start, and every record
	// sealed with the old one would read as foreign.
	return dirsync.Path(filepath.Dir(path))
}

func (k *Key) mac(kind, name string, body []byte) []byte {
	m := hmac.New(sha256.New, k.k)
	// Length-prefixed, so no two (kind, name, body) share an input.
	fmt.Fprintf(m, "spoolgate seal v1\x00%d:%s\x00%d:%s\x00", len(kind), kind, len(name), name)
	m.Write(body)
	return m.Sum(nil)
}

// Seal returns body followed by its seal line: the record of the given
// kind, to be written under the file name name (a base name).
func (k *Key) Seal(kind, name string, body []byte) ([]byte, error) {
	if k == nil || len(k.k) == 0 {
		return nil, ErrNoKey
	}
	out := make([]byte, 0, len(body)+len(trailer)+2*sha256.Size+2)
	out = append(out, body...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	sum := k.mac(kind, name, out)
	out = append(out, trailer...)
	out = hex.AppendEncode(out, sum)
	return append(out, '\n'), nil
}

// Open checks data, read from the file named name, as a sealed record of
// kind and returns its body. It fails with ErrUnsealed, ErrBadSeal or
// ErrNoKey; a record that fails is foreign.
func (k *Key) Open(kind, name string, data []byte) ([]byte, error) {
	body, mac, ok := split(data)
	if !ok {
		return nil, ErrUnsealed
	}
	if k == nil || len(k.k) == 0 {
		return nil, ErrNoKey
	}
	want := k.mac(kind, name, body)
	got, err := hex.DecodeString(mac)
	if err != nil || !hmac.Equal(got, want) {
		return nil, ErrBadSeal
	}
	return body, nil
}

// Sealed reports whether data ends with a seal line, checked or not.
func Sealed(data []byte) bool {
	_, _, ok := split(data)
	return ok
}

// Body is a sealed record's body, its seal unchecked: for a reader without
// the key (status on a machine that only sees the share), never for acting.
func Body(data []byte) ([]byte, bool) {
	b, _, ok := split(data)
	return b, ok
}

// split cuts data into the body and the seal line's hex digits; the seal
// line must be the last line.
func split(data []byte) (body []byte, mac string, ok bool) {
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return nil, "", false
	}
	rest := data[:len(data)-1]
	i := bytes.LastIndexByte(rest, '\n')
	line := rest[i+1:]
	if !bytes.HasPrefix(line, []byte(trailer)) {
		return nil, "", false
	}
	mac = string(line[len(trailer):])
	if len(mac) != 2*sha256.Size {
		return nil, "", false
	}
	return data[:i+1], mac, true
}
