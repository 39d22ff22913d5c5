package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/internal/dirsync"
	"github.com/spoolgate/spoolgate/internal/fsx"
)

// floorWorkers is the floor's number of claimers, the daemon's
// api.concurrency in throughput.
const floorWorkers = 5

// protocolFloor is the disk's own limit for the spool's protocol: the
// file work a task needs to survive a crash in each of its states, done by
// the same shape of writers as the daemon (one dropper, one intake, five
// claimers) and nothing else: no decoding, no index, no watcher, no log.
// Per task, eleven fsyncs, as the daemon's (strace -c):
//
//	drop:   write incoming/.tmp, fsync, rename to incoming/ID, fsync incoming/
//	intake: rename to pending/ID, write pending/.tmp, fsync, rename over it,
//	        fsync pending/ and incoming/ at once
//	mark:   rename to running/ID, write running/.tmp, fsync, rename over it,
//	        fsync running/ and pending/ at once
//	finish: write running/.tmp, fsync, rename over running/ID, rename to
//	        done/ID, fsync done/ and running/ at once
//
// Each rewrite goes through its writer's own spare file in that folder
// and swaps in (RENAME_EXCHANGE on Linux, the old version becoming the
// next spare), as the daemon's do, so that neither frees an inode: on ext4
// without a journal a freed inode slows every create of the next minute
// or more (see topdir_linux.go).
//
// It returns tasks finished per second, drops included: the rate the
// daemon would reach if its own work cost nothing.
func protocolFloor(dir string, n int, data []byte) (float64, error) {
	dirs := map[string]string{}
	for _, d := range []string{"incoming", "pending", "running", "done"} {
		dirs[d] = filepath.Join(dir, d)
		if err := os.MkdirAll(dirs[d], 0o755); err != nil {
			return 0, err
		}
	}
	path := func(d, id string) string { return filepath.Join(dirs[d], id+".yaml") }
	var (
		errOnce sync.Once
		firstEr error
	)
	fail := func(err error) {
		if err != nil {
			errOnce.Do(func() { firstEr = err })
		}
	}
	dropped := make(chan string, n)
	queued := make(chan string, n)
	var wg sync.WaitGroup
	pendingSpare := spare(filepath.Join(dirs["pending"], ".floor-intake.tmp"))
	wg.Add(1)
	go func() { // intake
		defer wg.Done()
		defer close(queued)
		for id := range dropped {
			if err := os.Rename(path("incoming", id), path("pending", id)); err != nil {
				fail(err)
				continue
			}
			fail(pendingSpare.put(path("pending", id), data))
			fail(syncBoth(dirs["pending"], dirs["incoming"]))
			queued <- id
		}
	}()
	for w := range floorWorkers {
		runningSpare := spare(filepath.Join(dirs["running"], fmt.Sprintf(".floor-%d.tmp", w)))
		wg.Add(1)
		go func() { // claim, mark, finish
			defer wg.Done()
			for id := range queued {
				run := path("running", id)
				if err := os.Rename(path("pending", id), run); err != nil {
					fail(err)
					continue
				}
				if _, err := os.ReadFile(run); err != nil {
					fail(err)
					continue
				}
				fail(runningSpare.put(run, data))
				fail(syncBoth(dirs["running"], dirs["pending"]))
				fail(runningSpare.put(run, data))
				fail(os.Rename(run, path("done", id)))
				fail(syncBoth(dirs["done"], dirs["running"]))
			}
		}()
	}
	start := time.Now()
	for i := range n {
		id := fmt.Sprintf("floor-%06d", i)
		if err := create(dirs["incoming"], path("incoming", id), data); err != nil {
			fail(err)
			break
		}
		fail(dirsync.Path(dirs["incoming"]))
		dropped <- id
	}
	close(dropped)
	wg.Wait()
	took := time.Since(start)
	if firstEr != nil {
		return 0, fmt.Errorf("protocol floor: %w", firstEr)
	}
	return float64(n) / took.Seconds(), nil
}

// spare is a writer's temp file in one folder, kept between rewrites.
type spare string

// put replaces path's content with data, durably but for the folder's
// sync (the caller's): the spare is overwritten in place (cut where its
// older version was longer), synced and swapped in, as the daemon's are.
func (s spare) put(path string, data []byte) error {
	f, err := os.OpenFile(string(s), os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if err := writeSynced(f, data); err != nil {
		return err
	}
	// The old version stays as the spare; where names cannot be swapped,
	// the spare moves over path and the next put creates a new one.
	if err := fsx.RawExchange(string(s), path); !errors.Is(err, fsx.ErrNoExchange) {
		return err
	}
	return os.Rename(string(s), path)
}

// create puts data at path, a new name, through a synced temp file in
// dir, as a drop is written; the folder's sync is the caller's.
func create(dir, path string, data []byte) error {
	f, err := os.CreateTemp(dir, ".floor-*.tmp")
	if err != nil {
		return err
	}
	if err := writeSynced(f, data); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// writeSynced writes data at the start of f, cuts what f had past it,
// syncs and closes f.
func writeSynced(f *os.File, data []byte) error {
	fi, err := f.Stat()
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil && fi.Size() > int64(len(data)) {
		err = f.Truncate(int64(len(data)))
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncBoth syncs the folder a file entered and the one it left at once,
// as the daemon does.
func syncBoth(to, from string) error {
	errc := make(chan error, 1)
	go func() { errc <- dirsync.Path(from) }()
	err := dirsync.Path(to)
	if e := <-errc; err == nil {
		err = e
	}
	return err
}
