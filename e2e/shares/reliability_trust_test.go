//go:build linux

package shares

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Issue 20's acceptance through `spoolgate run`, two hosts: a colleague
// renames and deletes the live lease file of an account while its answer
// streams. No second host may drive the account: the chat stand-in's count
// of generations at once per account stays at most 1, every task ends
// once in done/, none fails.

// runningOf reports the running task of account in the spool at root (a
// file with a fresh heartbeat), if any.
func runningOf(root, account string, fresh time.Duration) (string, bool) {
	l := spool.NewLayout(root)
	ents, _ := os.ReadDir(l.Lane(taskfile.KindWeb, taskfile.DirRunning))
	for _, e := range ents {
		tk, err := spool.ReadTaskFile(filepath.Join(l.Lane(taskfile.KindWeb, taskfile.DirRunning), e.Name()))
		if err == nil && tk.Account == account && time.Since(tk.HeartbeatAt) < fresh {
			return tk.TaskID, true
		}
	}
	return "", false
}

// liveLease returns the path of account's lease file with the highest
// generation, if any.
func liveLease(root, account string) (string, bool) {
	l := spool.NewLayout(root)
	ents, _ := os.ReadDir(l.Accounts())
	best, bestGen := "", -1
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), account+spool.LeaseExt)
		var g int
		if !ok || len(rest) == 0 || strings.ContainsFunc(rest, func(r rune) bool { return r < '0' || r > '9' }) {
			continue
		}
		fmt.Sscan(rest, &g)
		if g > bestGen {
			best, bestGen = filepath.Join(l.Accounts(), e.Name()), g
		}
	}
	return best, best != ""
}

func leaseTamperTwoHosts(t *testing.T, spoolA, spoolB, backing string, poll bool) {
	const stale = 2 * time.Second
	chat, err := chatstand.Start(chatstand.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chat.Close() })
	env := []string{"SPOOLGATE_FAKE_CHAT=" + chat.URL()}
	accts := []string{"a1", "a2"}
	a, b, ids := twoHostsWeb(t, twoHostsOpts{SpoolA: spoolA, SpoolB: spoolB, Backing: backing, Poll: poll, Stale: stale,
		Accounts: accts, Prefix: "tamper", N: 12, Env: env, Content: func(i int) string { return fmt.Sprintf("tamper %d [[duration=1200ms]]", i) }})

	// Tamper with a1's lease while a1 answers: rename it (a colleague
	// tidying), then, at the next answer, delete it; four times each.
	renamed, deleted := 0, 0
	for round := 0; round < 8 && finalCount(backing) < len(ids); round++ {
		var task string
		testkit.Wait(t, "a1 mid-answer, or the batch done", 30*time.Second, func() bool {
			var on bool
			task, on = runningOf(backing, "a1", stale/2)
			return on || finalCount(backing) >= len(ids)
		})

		if task == "" {
			break
		}
		p, ok := liveLease(backing, "a1")
		if !ok {
			continue
		}
		if round%2 == 0 {
			if os.Rename(p, p+".bak") == nil {
				renamed++
			}
		} else if os.Remove(p) == nil {
			deleted++
		}
		// Until that answer ends: the next tampering hits the next one.
		testkit.Wait(t, "the tampered answer to end", 20*time.Second, func() bool {
			cur, on := runningOf(backing, "a1", stale/2)
			return !on || cur != task
		})

	}
	testkit.Wait(t, "every task final", 90*time.Second, func() bool {
		a.MustBeAlive()
		b.MustBeAlive()
		return finalCount(backing) >= len(ids)
	})

	a.Stop()
	b.Stop()
	filepath.WalkDir(backing, func(p string, e os.DirEntry, err error) error {
		if err == nil && fsx.IsOwnTemp(e.Name()) {
			os.Remove(p)
		}
		return nil
	})
	au := auditSpool(t, backing)
	au.check(t, ids, 3)
	for _, id := range ids {
		if tk := au.tasks[id]; tk != nil && tk.State != taskfile.StateSuccess {
			t.Errorf("task %s ended %s: %s", id, tk.State, tk.Error)
		}
	}
	per := chat.MaxPerAccount()
	t.Logf("reliability: lease tampered mid-answer (renamed %d, deleted %d): the chat stand-in's most generations at once per account %v, in total %d; generations a1 %d, a2 %d",
		renamed, deleted, per, chat.MaxTotal(), chat.GenerationsBy("a1"), chat.GenerationsBy("a2"))
	if renamed+deleted == 0 {
		t.Fatal("no lease file was tampered with mid-answer: the test proved nothing")
	}
	for _, acct := range accts {
		if per[acct] > 1 {
			t.Errorf("account %s had %d generations at once across the hosts, want at most 1", acct, per[acct])
		}
	}
}

func TestReliability_LeaseTamperTwoHosts(t *testing.T) {
	t.Parallel()
	sp := filepath.Join(t.TempDir(), "spool")
	leaseTamperTwoHosts(t, sp, sp, sp, false)
}

func TestReliability_LeaseTamperTwoHostsShare(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	backing := filepath.Join(base, "backing")
	mntA, mntB := filepath.Join(base, "mnt-a"), filepath.Join(base, "mnt-b")
	mountBindfs(t, backing, mntA)
	mountBindfs(t, backing, mntB)
	leaseTamperTwoHosts(t, filepath.Join(mntA, "spool"), filepath.Join(mntB, "spool"), filepath.Join(backing, "spool"), true)
}
