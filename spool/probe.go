package spool

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
)

// What a spool folder's file system offers the protocol. Each check is
// done for real in the folder, on spoolgate's own temp names (a probe cut
// short by a crash leaves only files the temp cleanup removes).
const (
	CheckNoReplace = "noReplaceRename" // renameat2(RENAME_NOREPLACE) (MoveFileEx on Windows)
	CheckLink      = "hardLinks"       // link(2), failing on an existing name
	CheckExchange  = "renameExchange"  // renameat2(RENAME_EXCHANGE)
	CheckExcl      = "exclCreate"      // O_CREAT|O_EXCL fails on an existing name
	CheckDirSync   = "folderFsync"     // fsync of a folder
	CheckOverOpen  = "renameOverOpen"  // a rewrite's rename over a file open elsewhere
)

// ProbeChecks lists the checks in the order a probe line names them.
var ProbeChecks = []string{CheckNoReplace, CheckLink, CheckExchange, CheckExcl, CheckDirSync, CheckOverOpen}

var checkWords = map[string]string{
	CheckNoReplace: "no-replace rename", CheckLink: "hard links", CheckExchange: "rename-exchange",
	CheckExcl: "O_EXCL create", CheckDirSync: "folder fsync", CheckOverOpen: "rename over an open file",
}

// Claim protocols, in order of preference.
const (
	ClaimRename = "rename-noreplace" // one atomic no-replace rename per move
	ClaimLink   = "link-unlink"      // link (fails if the name exists), then unlink the source
	ClaimNone   = ""
)

// NotProbed is what one host cannot check, and how to check it with two.
const NotProbed = "flock between hosts is not probed from one host (spoolgate does not rely on it: " +
	"the web runner lock is per host); to check it, run `spoolgate probe --lock DIR` on one host and again on another: " +
	"the second must say \"held by another process\""

// Probe is what a probe found in one folder.
type Probe struct {
	Host   string            `json:"host,omitempty"`
	At     time.Time         `json:"at"`
	Dir    string            `json:"dir"`
	Checks map[string]string `json:"checks"` // check -> "ok", or what went wrong
	Claim  string            `json:"claim"`  // the claim protocol these allow; "" none
	Line   string            `json:"line"`   // the one-line summary
}

// OK reports whether check passed.
func (p *Probe) OK(check string) bool { return p.Checks[check] == "ok" }

// ErrNoClaim is returned by CheckShare when no claim protocol is safe.
var ErrNoClaim = errors.New("no safe claim protocol on this file system")

// ProbeDir runs every check in dir, which must exist and be writable; its
// temp files carry host's tag (the config's host; "" for this machine's
// name), so the temp cleanup knows them.
func ProbeDir(dir, host string) *Probe {
	if host == "" {
		host, _ = os.Hostname()
	}
	tag := fsx.HostTag(host)
	p := &Probe{At: now(), Host: host, Dir: dir, Checks: map[string]string{}}
	run := func(check string, f func() error) {
		if err := f(); err != nil {
			p.Checks[check] = oneLine(err)
		} else {
			p.Checks[check] = "ok"
		}
	}
	var made []string
	defer func() {
		for _, f := range made {
			os.Remove(f)
		}
	}()
	file := func(content string) (string, error) {
		path := fsx.TempName(filepath.Join(dir, "x"), tag)
		f, err := fsx.CreateExcl(path)
		if err != nil {
			return "", err
		}
		made = append(made, path)
		_, err = f.WriteString(content)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return path, err
	}
	// pair makes two files, a and b, holding "a" and "b".
	pair := func() (a, b string, err error) {
		if a, err = file("a"); err == nil {
			b, err = file("b")
		}
		return a, b, err
	}
	name := func() string { p := fsx.TempName(filepath.Join(dir, "x"), tag); made = append(made, p); return p }
	read := func(path string) string { b, _ := os.ReadFile(path); return string(b) }

	run(CheckExcl, func() error {
		a, err := file("a")
		if err != nil {
			return fmt.Errorf("create: %w", err)
		}
		f, err := fsx.CreateExcl(a)
		if err == nil {
			f.Close()
			return errors.New("a second O_EXCL create of one name succeeded")
		}
		if !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("second create: %w (want EEXIST)", err)
		}
		return nil
	})
	run(CheckNoReplace, func() error {
		a, b, err := pair()
		if err != nil {
			return err
		}
		err = fsx.RawNoReplace(a, b)
		switch {
		case err == nil:
			if read(b) == "a" {
				return errors.New("DANGER: it replaced the existing file")
			}
			return errors.New("it reported success on an existing name")
		case !errors.Is(err, os.ErrExist):
			return err
		}
		c := name()
		if err := fsx.RawNoReplace(a, c); err != nil {
			return fmt.Errorf("to a free name: %w", err)
		}
		if read(c) != "a" || exists(a) {
			return errors.New("the move to a free name did not move the file")
		}
		return nil
	})
	run(CheckLink, func() error {
		a, b, err := pair()
		if err != nil {
			return err
		}
		err = os.Link(a, b)
		switch {
		case err == nil:
			return errors.New("DANGER: link over an existing name succeeded")
		case !errors.Is(err, os.ErrExist):
			return fsx.UnwrapLink(err)
		}
		c := name()
		if err := os.Link(a, c); err != nil {
			return fsx.UnwrapLink(err)
		}
		if read(c) != "a" {
			return errors.New("the new link does not read as the file")
		}
		return nil
	})
	run(CheckExchange, func() error {
		a, b, err := pair()
		if err != nil {
			return err
		}
		if err := fsx.RawExchange(a, b); err != nil {
			return err
		}
		if read(a) != "b" || read(b) != "a" {
			return errors.New("it reported success but did not swap the files")
		}
		return nil
	})
	run(CheckDirSync, func() error { return fsx.SyncDir(dir) })
	run(CheckOverOpen, func() error {
		a, b, err := pair()
		if err != nil {
			return err
		}
		f, err := os.Open(b)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := os.Rename(a, b); err != nil {
			return fsx.UnwrapLink(err)
		}
		if read(b) != "a" {
			return errors.New("the rename did not replace the file")
		}
		return nil
	})
	switch {
	case p.OK(CheckNoReplace):
		p.Claim = ClaimRename
	case p.OK(CheckLink):
		p.Claim = ClaimLink
	}
	p.Line = p.summary()
	return p
}

func (p *Probe) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "share probe %s:", p.Dir)
	for i, c := range ProbeChecks {
		if i > 0 {
			b.WriteByte(',')
		}
		v := p.Checks[c]
		if v == "ok" {
			v = "yes"
		} else {
			v = "NO (" + v + ")"
		}
		fmt.Fprintf(&b, " %s %s", checkWords[c], v)
	}
	switch p.Claim {
	case ClaimNone:
		b.WriteString("; claims: NONE SAFE")
	default:
		fmt.Fprintf(&b, "; claims by %s", p.Claim)
	}
	if p.Claim != ClaimNone && !p.OK(CheckExchange) {
		b.WriteString("; rewrites fenced by check-then-rename (no exchange)")
	}
	return b.String()
}

// Refusal is the start-up error for a folder with no safe claim protocol:
// it names the missing primitives and what provides them.
func (p *Probe) Refusal() error {
	if p.Claim != ClaimNone {
		return nil
	}
	return fmt.Errorf("%w: %s: no-replace rename: %s; hard links: %s. Two daemons could then run one task twice, "+
		"so `spoolgate run` refuses to start on it. Provide one of them: mount the share with the kernel's cifs client "+
		"(mount -t cifs //server/share DIR -o vers=3.1.1,...: hard links work against Samba and Windows servers) "+
		"or NFS, rather than a userspace (FUSE) SMB mount such as smbnetfs; enable hard links on the server or the "+
		"FUSE mount; or run spoolgate on the file server itself, on its local disk",
		ErrNoClaim, p.Dir, p.Checks[CheckNoReplace], p.Checks[CheckLink])
}

// ProbeSpool probes one folder of each file system the spool's folders are
// on (by device; only the first folder where devices are unknown), after creating
// the layout. The first probe of a file system without a safe claim
// protocol is the error.
func (s *Store) ProbeSpool() ([]*Probe, error) {
	seen := map[uint64]bool{}
	var out []*Probe
	var refusal error
	for _, d := range s.Layout.Folders() {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			continue
		}
		_, dev, _ := fsx.SysStamp(fi)
		if dev != 0 {
			if seen[dev] {
				continue
			}
			seen[dev] = true
		}
		p := ProbeDir(d, s.Cfg.Host)
		out = append(out, p)
		if err := p.Refusal(); err != nil && refusal == nil {
			refusal = err
		}
		if dev == 0 {
			break // one look is all a platform without devices gets
		}
	}
	if len(out) > 1 {
		// Moves cross folders: on two file systems they would fail.
		out[0].Line += fmt.Sprintf("; WARNING: the spool's folders are on %d file systems, moves between them fail", len(out))
	}
	return out, refusal
}

// ProbeFile is where a daemon leaves its last probe for `status --json`:
// <spool>/probe.HOST (one per host, like paused.HOST).
func (l Layout) ProbeFile(host string) string { return filepath.Join(l.Root, "probe."+host) }

// SaveProbe writes the first probe for status to read.
func (s *Store) SaveProbe(p *Probe) error {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return s.WriteFileAtomic(s.Layout.ProbeFile(s.Cfg.Host), append(data, '\n'))
}

// ReadProbes reads every host's saved probe, sorted by host.
func ReadProbes(l Layout) []Probe {
	ents, err := fsx.ReadDir(l.Root)
	if err != nil {
		return nil
	}
	var out []Probe
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "probe.") || fsx.IsOwnTemp(e.Name()) {
			continue
		}
		data, _, err := fsx.ReadOwn(filepath.Join(l.Root, e.Name()), 64<<10)
		if err != nil {
			continue
		}
		var p Probe
		if json.Unmarshal(data, &p) == nil {
			out = append(out, p)
		}
	}
	return out
}

func oneLine(err error) string {
	inner := fsx.UnwrapLink(err)
	var pe *os.PathError
	if errors.As(inner, &pe) {
		inner = pe.Err
	}
	return strings.ReplaceAll(fsx.ErrName(inner).Error(), "\n", " ")
}
