package notify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/startstop"
	"github.com/spoolgate/spoolgate/spool"
)

// BatchWatch sends batch.finished exactly once per completion of a batch,
// however many daemons share the spool and however often they restart.
//
// A batch is finished when every task of it, in both lanes, is final and
// no drop of it waits in a drop box. Tasks that arrive later (a new task of
// the batch, or `spoolgate retry` of one of its failed tasks) reopen it;
// when they are final too, the batch finishes again and a new
// batch.finished is sent with the new counts. Each completion is named by
// the batch and its last finishedAt, which every daemon reads the same.
//
// The daemon that creates the completion's marker in <spool>/notify/batches/
// with a no-replace move sends the event; the others find the marker and
// send nothing. A marker records its owner; once every receiver has the
// event, a KEY.sent file says so. A marker left unsent by a daemon that
// died (same host, pid gone) is taken over, by another no-replace move, and
// sent again with the same event id: a receiver that got it just before
// the crash sees that id twice and may drop the repeat. Completions from
// before notifications were first switched on (<spool>/notify/since) are
// never sent.
type BatchWatch struct {
	Store    *spool.Store
	Notifier *Notifier
	Log      *slog.Logger
	// Every is the period of the full sweep (default 1 min), which also
	// catches completions that no event of this daemon announced (the
	// last task finished on another host that died before it sent).
	Every time.Duration
	// Settle is how long Kick waits for more kicks before it looks
	// (default 300 ms): the tasks of a batch often finish together.
	Settle time.Duration
	// Owner names this daemon in markers: host:pid (the default). A dead
	// owner's unsent markers are sent again by another daemon of its host.
	Owner string

	owner    string
	dir      string
	start    time.Time       // this watch's start: `since` when the file is foreign
	trusted  map[string]bool // marker files checked: sealed by a daemon of this installation (they never change)
	sentSeen map[string]bool // keys this watch saw sent: a .sent deleted since sends nothing again
	scanner  *spool.BatchScanner
	since    time.Time
	kick     chan struct{}
	startstop.Base
	setup   sync.Once
	checkMu sync.Mutex // one Check at a time
}

// markerRecord is the content of a marker (and of a takeover file).
type markerRecord struct {
	Owner   string    `json:"owner"`
	Created time.Time `json:"created"`
	Event   *Event    `json:"event,omitempty"`
}

// Start runs the watch until Stop: a sweep at once, then at each Kick and
// every Every. Safe to call twice.
func (w *BatchWatch) Start(ctx context.Context) error {
	w.setup.Do(w.init)
	ctx, ok, started, stopped := w.StartInit(ctx)
	if !ok {
		return nil
	}
	go func() {
		defer stopped()
		started()
		poll(ctx, w.Every, w.kick, w.Settle, w.Check)
		// A last look: a batch whose last task finished during shutdown
		// is still announced (the notifier stops after the watch).
		w.Check()
	}()
	return nil
}

func (w *BatchWatch) init() {
	if w.Log == nil {
		w.Log = slog.New(slog.DiscardHandler)
	}
	w.Log = w.Log.With("component", "notify")
	if w.Every <= 0 {
		w.Every = time.Minute
	}
	if w.Settle <= 0 {
		w.Settle = 300 * time.Millisecond
	}
	w.owner = w.Owner
	if w.owner == "" {
		w.owner = spool.OwnerOf(w.Store.Cfg.Host)
	}
	w.dir = filepath.Join(w.Store.Layout.Root, "notify", "batches")
	w.scanner = spool.NewBatchScanner(w.Store.Layout)
	w.kick = make(chan struct{}, 1)
	w.start = time.Now().UTC()
	w.trusted = map[string]bool{}
	w.sentSeen = map[string]bool{}
}

// Kick asks for a look soon: a task of a batch just became final.
func (w *BatchWatch) Kick() {
	w.setup.Do(w.init)
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Check looks once: it sends batch.finished for each completion that has
// no marker yet, and again for markers a dead daemon left unsent.
func (w *BatchWatch) Check() {
	w.setup.Do(w.init)
	w.checkMu.Lock()
	defer w.checkMu.Unlock()
	if err := os.MkdirAll(w.dir, spool.DirPerm); err != nil {
		w.Log.Error("batch markers", "err", err)
		return
	}
	since, err := w.sinceTime()
	if err != nil {
		w.Log.Error("batch markers", "err", err)
		return
	}
	marks, err := w.readMarks()
	if err != nil {
		w.Log.Error("batch markers", "err", err)
		return
	}
	tallies, err := w.scanner.Scan()
	if err != nil {
		w.Log.Error("batch scan", "err", err)
		return
	}
	names := make([]string, 0, len(tallies))
	for n := range tallies {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t := tallies[name]
		if !t.Finished() || t.LastFinishedAt.Before(since) {
			continue
		}
		h, ms := batchHash(name), t.LastFinishedAt.UnixMilli()
		if last, ok := marks.latest[h]; ok && last >= ms {
			continue
		}
		key := h + "-" + strconv.FormatInt(ms, 10)
		e := BatchFinished(w.Store.Cfg, t, key, time.Now())
		created, err := w.create(key+".json", markerRecord{Owner: w.owner, Created: time.Now().UTC(), Event: &e})
		if err != nil {
			w.Log.Error("batch marker", "batch", name, "err", err)
			continue
		}
		if !created {
			continue // another daemon saw this completion first: it sends
		}
		w.Log.Info("batch finished", "batch", name, "success", t.Success, "failed", t.Failed, "canceled", t.Canceled, "id", e.ID)
		w.send(key, e)
	}
	for _, key := range marks.unsent {
		w.takeOver(key, marks)
	}
}

// send queues e and records the delivery once every receiver has it.
func (w *BatchWatch) send(key string, e Event) {
	w.Notifier.NotifyThen(e, func(err error) {
		if err != nil {
			return // left unsent: another daemon of this host running now sends it again if this one dies
		}
		if _, err := w.create(key+".sent", markerRecord{Owner: w.owner, Created: time.Now().UTC()}); err != nil {
			w.Log.Error("record batch event sent", "id", e.ID, "err", err)
		}
	})
}

// takeOver resends an unsent marker whose current owner is a dead process
// of this host. Of several daemons that see it, the one whose no-replace
// move creates the next takeover file resends.
func (w *BatchWatch) takeOver(key string, marks markSet) {
	n := marks.takes[key]
	name := key + ".json"
	if n > 0 {
		name = key + ".take." + strconv.Itoa(n)
	}
	var cur markerRecord
	if err := w.readMarker(name, &cur); err != nil {
		return
	}
	if cur.Owner == w.owner || !deadHere(cur.Owner, w.Store.Cfg.Host) {
		return // still in flight, or on another host that may yet send it
	}
	var orig markerRecord
	if err := w.readMarker(key+".json", &orig); err != nil || orig.Event == nil {
		return
	}
	if orig.Created.Before(w.start) {
		// From before this daemon's start: its .sent may have been
		// deleted (a sealed marker is genuine, not fresh), and resending
		// would repeat an event a receiver already has. The price: an
		// event whose daemon died between its marker and its send, with
		// no other daemon of the host running then, is not sent by a
		// restart. Logged once.
		w.Store.Limiter().Fail("notify-unsent:"+key, "batch.finished from before this daemon's start has no .sent (deleted, or its daemon died before sending): not sent again",
			errors.New("no .sent"), "batch", orig.Event.Batch, "id", orig.Event.ID, "owner", cur.Owner)
		return
	}
	created, err := w.create(key+".take."+strconv.Itoa(n+1), markerRecord{Owner: w.owner, Created: time.Now().UTC()})
	if err != nil || !created {
		return
	}
	w.Log.Warn("resending batch.finished left unsent by a daemon that died", "batch", orig.Event.Batch, "id", orig.Event.ID, "owner", cur.Owner)
	w.send(key, *orig.Event)
}

// create writes name in the marker folder only if it does not exist yet.
func (w *BatchWatch) create(name string, rec markerRecord) (bool, error) {
	data, err := json.Marshal(rec)
	if err != nil {
		return false, err
	}
	// Sealed: only a marker a daemon of this installation wrote is ever
	// acted on (issue 20).
	err = w.Store.WriteSealedNew(spool.SealMarker, filepath.Join(w.dir, name), data)
	if errors.Is(err, os.ErrExist) {
		return false, nil
	}
	return err == nil, err
}

type markSet struct {
	latest map[string]int64 // batch hash → last completion (ms) with a marker
	unsent []string         // keys without .sent
	takes  map[string]int   // key → highest takeover number
}

func (w *BatchWatch) readMarks() (markSet, error) {
	ents, err := fsx.ReadDir(w.dir)
	if err != nil {
		return markSet{}, err
	}
	m := markSet{latest: map[string]int64{}, takes: map[string]int{}}
	sent := map[string]bool{}
	var keys []string
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, ".json") && !fsx.IsOwnTemp(name):
			key := strings.TrimSuffix(name, ".json")
			h, ms, ok := splitKey(key)
			if !ok || !w.isTrusted(name) {
				continue // a planted marker silences nothing and is never sent
			}
			keys = append(keys, key)
			if ms > m.latest[h] {
				m.latest[h] = ms
			}
		case strings.HasSuffix(name, ".sent") && !fsx.IsOwnTemp(name):
			if w.isTrusted(name) {
				sent[strings.TrimSuffix(name, ".sent")] = true
				w.sentSeen[strings.TrimSuffix(name, ".sent")] = true
			}
		case strings.Contains(name, ".take."):
			key, num, _ := strings.Cut(name, ".take.")
			// Numbered above every take, planted or not, so a planted name
			// cannot make the next take collide; read only if sealed.
			if n, err := strconv.Atoi(num); err == nil && n > 0 && n < 1<<20 && n > m.takes[key] {
				m.takes[key] = n
			}
		}
	}
	for _, k := range keys {
		// A .sent this watch saw, gone since (deleted), is still sent.
		if !sent[k] && !w.sentSeen[k] {
			m.unsent = append(m.unsent, k)
		}
	}
	return m, nil
}

// sinceTime is when notifications were first switched on for this spool:
// the first daemon to start with them writes it, sealed. A foreign since
// (planted, or from before seals) is ignored, logged once and left in
// place: this watch's start counts instead, so a planted time in the
// future cannot silence every batch.finished. A sealed time in the future
// (a clock far off) counts as now.
func (w *BatchWatch) sinceTime() (time.Time, error) {
	if !w.since.IsZero() {
		return w.since, nil
	}
	p := filepath.Join(filepath.Dir(w.dir), "since")
	now := time.Now().UTC().Truncate(time.Millisecond)
	err := w.Store.WriteSealedNew(spool.SealSince, p, []byte(now.Format(time.RFC3339Nano)+"\n"))
	if err != nil && !errors.Is(err, os.ErrExist) {
		return time.Time{}, err
	}
	data, _, err := w.Store.ReadSealed(spool.SealSince, p, 1024)
	if errors.Is(err, spool.ErrForeign) {
		w.since = w.start
		return w.since, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(data)))
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", p, err)
	}
	if t.After(now) {
		w.Log.Warn("notify/since is in the future (a clock far off?): counting from now", "since", t)
		t = now
	}
	w.since = t
	return t, nil
}

// isTrusted reports whether the marker file name was sealed by a daemon
// of this installation; markers never change, so each is read once.
func (w *BatchWatch) isTrusted(name string) bool {
	if ok, seen := w.trusted[name]; seen {
		return ok
	}
	var rec markerRecord
	err := w.readMarker(name, &rec)
	if err != nil && errors.Is(err, os.ErrNotExist) {
		return false
	}
	w.trusted[name] = err == nil
	return err == nil
}

// readMarker reads a sealed marker file of the marker folder.
func (w *BatchWatch) readMarker(name string, v any) error {
	data, _, err := w.Store.ReadSealed(spool.SealMarker, filepath.Join(w.dir, name), 1<<20)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// batchHash names a batch in file names: batch labels may hold any
// character, file names may not.
func batchHash(batch string) string {
	s := sha256.Sum256([]byte(batch))
	return hex.EncodeToString(s[:8])
}

func splitKey(key string) (string, int64, bool) {
	h, ms, ok := strings.Cut(key, "-")
	if !ok || len(h) != 16 {
		return "", 0, false
	}
	n, err := strconv.ParseInt(ms, 10, 64)
	return h, n, err == nil
}

// deadHere reports whether owner (host:pid) is a process of this host
// that no longer runs. Another host's processes cannot be asked.
func deadHere(owner, host string) bool {
	h, pid := spool.ParseOwner(owner)
	return h == host && pid > 0 && fsx.ProcessGone(pid)
}
