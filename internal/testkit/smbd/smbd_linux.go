//go:build linux

package smbd

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/testkit"
)

// Need skips the test unless every tool is on PATH (fails it under CI=true).
func Need(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI=true but %s is missing: .ci/run installs samba, smbclient and smbnetfs", tool)
			}
			t.Skipf("%s not installed", tool)
		}
	}
}

// NeedFUSE is Need for a FUSE mount: the tools and /dev/fuse. Only a
// machine without /dev/fuse (a container without the device) skips, and
// never under CI=true.
func NeedFUSE(t testing.TB, tools ...string) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but /dev/fuse is missing: %v", err)
		}
		t.Skipf("no /dev/fuse: %v", err)
	}
	Need(t, append([]string{"fusermount"}, tools...)...)
}

// Server is one smbd.
type Server struct {
	Port int
	Dir  string // its private folders and log
	cmd  *exec.Cmd
}

// Start runs smbd exporting shares (share name -> local folder) as
// guest-writable, files owned by the test's user. It waits until the
// server answers on its port.
func Start(t testing.TB, shares map[string]string) *Server {
	t.Helper()
	Need(t, "smbd", "smbclient")
	dir, err := os.MkdirTemp("", "sg-smbd") // short: smbd's socket paths must fit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, sub := range []string{"private", "lock", "state", "cache", "pid", "ncalrpc"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	var last error
	for try := 0; try < 5; try++ {
		s := &Server{Port: freePort(t), Dir: dir}
		if last = s.start(t, shares); last == nil {
			return s
		}
	}
	t.Fatalf("smbd did not start: %v", last)
	return nil
}

func (s *Server) start(t testing.TB, shares map[string]string) error {
	user := "root"
	if u := os.Getenv("USER"); u != "" {
		user = u
	}
	var conf strings.Builder
	fmt.Fprintf(&conf, `[global]
  server role = standalone server
  smb ports = %d
  interfaces = 127.0.0.1
  bind interfaces only = yes
  private dir = %[2]s/private
  lock directory = %[2]s/lock
  state directory = %[2]s/state
  cache directory = %[2]s/cache
  pid directory = %[2]s/pid
  ncalrpc dir = %[2]s/ncalrpc
  binddns dir = %[2]s/private
  passdb backend = tdbsam:%[2]s/private/passdb.tdb
  log file = %[2]s/log.smbd
  log level = 1
  map to guest = Bad User
  guest account = %[3]s
  disable netbios = yes
  load printers = no
  printing = bsd
  printcap name = /dev/null
  disable spoolss = yes
  usershare path =
  server min protocol = SMB2
`, s.Port, s.Dir, user)
	for name, path := range shares {
		fmt.Fprintf(&conf, "[%s]\n  path = %s\n  read only = no\n  guest ok = yes\n  force user = %s\n  create mask = 0644\n", name, path, user)
	}
	confPath := filepath.Join(s.Dir, "smb.conf")
	if err := os.WriteFile(confPath, []byte(conf.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(s.Dir, "stdout.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	s.cmd = exec.Command("smbd", "--foreground", "--no-process-group", "--debug-stdout", "--configfile="+confPath)
	s.cmd.Stdout, s.cmd.Stderr = log, log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("smbd: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	stop := func() {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM) // smbd and its per-client children
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.Addr(), 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		select {
		case err := <-exited:
			out, _ := os.ReadFile(filepath.Join(s.Dir, "stdout.log"))
			return fmt.Errorf("smbd exited (%v): %s", err, tail(out))
		case <-time.After(50 * time.Millisecond): // polling a port: there is no event to wait on
		}
		if time.Now().After(deadline) {
			stop()
			return fmt.Errorf("smbd not listening on %s after 15s", s.Addr())
		}
	}
	t.Cleanup(stop)
	return nil
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// Client runs smbclient against share with the given commands (joined by
// "; ", as for -c) in local folder dir, and returns its output.
func (s *Server) Client(dir, share string, cmds ...string) (string, error) {
	cmd := exec.Command("smbclient", "-N", "-p", strconv.Itoa(s.Port), "//127.0.0.1/"+share, "-c", strings.Join(cmds, "; "))
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil && bytes.Contains(out, []byte("NT_STATUS_")) {
		err = fmt.Errorf("smbclient: %s", firstLine(out, "NT_STATUS_"))
	}
	return string(out), err
}

// Mount mounts the server's shares through smbnetfs (FUSE) and returns the
// folder that holds share; it is unmounted at the test's cleanup. Each
// call is a mount of its own, as on a host of its own.
func (s *Server) Mount(t testing.TB, share string) string {
	t.Helper()
	NeedFUSE(t, "smbnetfs")
	home, err := os.MkdirTemp("", "sg-netfs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	mnt := filepath.Join(home, "mnt")
	if err := os.MkdirAll(filepath.Join(home, ".smb"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(mnt, 0o700)
	// smbnetfs refuses an auth line in a file others can read.
	if err := os.WriteFile(filepath.Join(home, ".smb", "smbnetfs.conf"),
		[]byte("auth \"guest\" \"\"\nsmb_query_browsers \"false\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".smb", "smb.conf"),
		[]byte("[global]\n  client min protocol = SMB2\n  disable netbios = yes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(home, "smbnetfs.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command("smbnetfs", mnt, "-f")
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("smbnetfs: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		exec.Command("fusermount", "-u", "-z", mnt).Run()
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	// libsmbclient takes the port in the host part: HOST:PORT.
	dir := filepath.Join(mnt, s.Addr(), share)
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := os.ReadDir(dir); err == nil {
			return dir
		} else if time.Now().After(deadline) {
			out, _ := os.ReadFile(filepath.Join(home, "smbnetfs.log"))
			t.Fatalf("smbnetfs mount %s not ready: %v: %s", dir, err, tail(out))
		}
		select {
		case err := <-exited:
			out, _ := os.ReadFile(filepath.Join(home, "smbnetfs.log"))
			t.Fatalf("smbnetfs exited (%v): %s", err, tail(out))
		case <-time.After(50 * time.Millisecond): // a mount raises no event to wait on
		}
	}
}

func freePort(t testing.TB) int {
	_, port, err := net.SplitHostPort(testkit.FreeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(port)
	return n
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

func firstLine(b []byte, sub string) string {
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, sub) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// SlowPut writes data to remote (a path in share) through SMB the way a
// client saving over a slow link does: one smbclient session that puts
// the file as it stands every pace, a chunk longer each time (the server
// opens the file, truncates it, writes and closes it, updating its
// attributes, at every chunk). local is a scratch file of the caller's.
// (smbclient's reput would append, but in Samba 4.17 it writes the rest
// at offset 0.)
func (s *Server) SlowPut(share, local, remote string, data []byte, chunks int, over time.Duration) error {
	chunks = max(chunks, 1)
	cmd := exec.Command("smbclient", "-N", "-p", strconv.Itoa(s.Port), "//127.0.0.1/"+share)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	size := (len(data) + chunks - 1) / chunks
	pace := over / time.Duration(chunks)
	for i, end := 0, min(size, len(data)); ; i, end = i+1, min(end+size, len(data)) {
		// A new scratch file per chunk: smbclient may still be reading
		// the previous one.
		p := fmt.Sprintf("%s.%d", local, i)
		if err = os.WriteFile(p, data[:end], 0o644); err != nil {
			break
		}
		if _, err = fmt.Fprintf(stdin, "put %s %s\n", p, remote); err != nil {
			break
		}
		if end == len(data) {
			break
		}
		time.Sleep(pace) // the writer's own pace
	}
	fmt.Fprintln(stdin, "quit")
	stdin.Close()
	if werr := cmd.Wait(); err == nil {
		err = werr
	}
	if err == nil && bytes.Contains(out.Bytes(), []byte("NT_STATUS_")) {
		err = fmt.Errorf("smbclient: %s", firstLine(out.Bytes(), "NT_STATUS_"))
	}
	return err
}
