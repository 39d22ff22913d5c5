package console

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/spool/status"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// durationBuckets span both lanes: API tasks take 8-20 s, web tasks 31 s
// to over 6 min (the field report), so one set of buckets serves both.
var durationBuckets = []float64{1, 2, 5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 240, 300, 420, 600, 900, 1800, 3600}

// metrics is /metrics: counters fed by the lanes' hooks, and gauges read
// from a spool snapshot at each scrape (the spool is the truth, so the
// gauges include work of other daemons on the same share). Its registry
// is its own, not the process-global default.
type metrics struct {
	reg      *prometheus.Registry
	attempts *prometheus.CounterVec
	retries  *prometheus.CounterVec
	reclaims *prometheus.CounterVec
	rejects  *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// Web: how attempts delivered their prompts, and resends after a
	// send whose outcome was unknown.
	deliveries *prometheus.CounterVec
	doubles    prometheus.Counter
}

func newMetrics(h *httpServer) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "spoolgate_task_attempts_total",
			Help: "Attempts this daemon ended, by lane and outcome (success, failed, canceled, retry).",
		}, []string{"lane", "outcome"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "spoolgate_task_retries_total",
			Help: "Attempts that ended in a scheduled retry, by lane.",
		}, []string{"lane"}),
		reclaims: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "spoolgate_tasks_reclaimed_total",
			Help: "Stale running tasks reclaimed, by lane.",
		}, []string{"lane"}),
		rejects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "spoolgate_rejected_drops_total",
			Help: "Drops this daemon rejected, by lane.",
		}, []string{"lane"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "spoolgate_task_duration_seconds",
			Help:    "Duration of ended attempts, by lane.",
			Buckets: durationBuckets,
		}, []string{"lane"}),
	}
	m.deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "spoolgate_web_deliveries_total",
		Help: "Web attempts by how they delivered the prompt: sent (first send), reattached (answer collected from the recorded conversation, nothing sent), resent (sent again in a new chat).",
	}, []string{"how"})
	m.doubles = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "spoolgate_web_possible_double_sends_total",
		Help: "Web prompts sent again after a send whose outcome could not be known (cut off between sending and the page's acceptance, and not found in the history).",
	})
	for _, h := range []taskfile.DeliveryHow{taskfile.DeliverySent, taskfile.DeliveryReattached, taskfile.DeliveryResent} {
		m.deliveries.WithLabelValues(string(h))
	}
	for _, k := range taskfile.Kinds { // present from the start, at zero
		m.retries.WithLabelValues(string(k))
		m.reclaims.WithLabelValues(string(k))
		m.rejects.WithLabelValues(string(k))
		m.duration.WithLabelValues(string(k))
	}
	m.reg.MustRegister(m.deliveries, m.doubles, m.attempts, m.retries, m.reclaims, m.rejects, m.duration, &spoolCollector{h: h},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) hooks() lanes.Hooks {
	return lanes.Hooks{
		OnAttemptEnd: func(k taskfile.Kind, t *taskfile.Task, d time.Duration) {
			outcome := string(t.State)
			if t.State == taskfile.StatePending {
				outcome = "retry"
				m.retries.WithLabelValues(string(k)).Inc()
			}
			m.attempts.WithLabelValues(string(k), outcome).Inc()
			m.duration.WithLabelValues(string(k)).Observe(d.Seconds())
		},
		OnReject:  func(k taskfile.Kind, _ string) { m.rejects.WithLabelValues(string(k)).Inc() },
		OnReclaim: func(k taskfile.Kind, _ *taskfile.Task) { m.reclaims.WithLabelValues(string(k)).Inc() },
		OnDelivery: func(_ taskfile.Kind, _ *taskfile.Task, d taskfile.Delivery) {
			m.deliveries.WithLabelValues(string(d.How)).Inc()
			if d.PossibleDoubleSend {
				m.doubles.Inc()
			}
		},
	}
}

var (
	descTasks = prometheus.NewDesc("spoolgate_tasks",
		"Task files in the spool, by lane and state (the folder they sit in).", []string{"lane", "state"}, nil)
	descRejected = prometheus.NewDesc("spoolgate_rejected_drops",
		"Rejected drops sitting in the lane's failed/ folder.", []string{"lane"}, nil)
	descResultChecks = prometheus.NewDesc("spoolgate_web_result_checks",
		"Successful web answers in done/, by how each compares with what the page showed (verified, differs, unchecked).", []string{"lane", "check"}, nil)
	descIncoming = prometheus.NewDesc("spoolgate_incoming_drops",
		"Drops waiting in the lane's incoming/ folder, not yet taken.", []string{"lane"}, nil)
	descPaused = prometheus.NewDesc("spoolgate_lane_paused",
		"1 when the lane's paused file exists.", []string{"lane"}, nil)
	descConcurrency = prometheus.NewDesc("spoolgate_lane_concurrency",
		"Tasks the lane runs at once (web: one per session that can run; each session runs 1, always).", []string{"lane"}, nil)
	descETA = prometheus.NewDesc("spoolgate_lane_eta_seconds",
		"Estimated seconds until the lane's runnable work is done; absent when unknown.", []string{"lane"}, nil)
	descHeld = prometheus.NewDesc("spoolgate_lane_held_tasks",
		"Pending tasks held, by lane and reason (paused, account, runner, standby, deferred).", []string{"lane", "reason"}, nil)
	descHeartbeat = prometheus.NewDesc("spoolgate_running_heartbeat_age_seconds",
		"Seconds since each running task's last heartbeat.", []string{"lane", "task"}, nil)
	descAccountHeld = prometheus.NewDesc("spoolgate_account_held",
		"1 for each account a usage limit holds now (its tasks wait, spending no attempt).", []string{"account", "site"}, nil)
	descAccountHeldUntil = prometheus.NewDesc("spoolgate_account_held_until_seconds",
		"When each held account's hold ends, as a Unix time.", []string{"account"}, nil)
	descRunner = prometheus.NewDesc("spoolgate_web_runner",
		"This daemon's web lane: held=1 when it holds the web runner lock, standby=1 when it waits for it.", []string{"state"}, nil)
)

// spoolCollector reads the spool at each scrape.
type spoolCollector struct{ h *httpServer }

func (c *spoolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descTasks, descRejected, descResultChecks, descIncoming, descPaused, descConcurrency, descETA, descHeld, descHeartbeat, descRunner, descAccountHeld, descAccountHeldUntil, descSession, descSessionTasks, descTokens, descTokenCost} {
		ch <- d
	}
}

func (c *spoolCollector) Collect(ch chan<- prometheus.Metric) {
	held, standby := 0.0, 0.0
	for _, li := range c.h.info() {
		if li.Kind == taskfile.KindWeb {
			if li.Standby {
				standby = 1
			} else {
				held = 1
			}
		}
	}
	ch <- prometheus.MustNewConstMetric(descRunner, prometheus.GaugeValue, held, "held")
	ch <- prometheus.MustNewConstMetric(descRunner, prometheus.GaugeValue, standby, "standby")

	st, err := c.h.snap.Snapshot(c.h.now())
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descTasks, err)
		return
	}
	g := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, ln := range st.Lanes {
		c := ln.Counts
		for _, s := range []struct {
			state string
			n     int
		}{{"pending", c.Pending}, {"running", c.Running}, {"success", c.Success}, {"failed", c.Failed}, {"canceled", c.Canceled}} {
			g(descTasks, float64(s.n), ln.Lane, s.state)
		}
		g(descRejected, float64(ln.Rejected), ln.Lane)
		for _, k := range []string{"verified", "differs", "unchecked"} {
			if ln.ResultChecks != nil {
				g(descResultChecks, float64(ln.ResultChecks[k]), ln.Lane, k)
			}
		}
		g(descIncoming, float64(ln.Incoming), ln.Lane)
		paused := 0.0
		if ln.Paused {
			paused = 1
		}
		g(descPaused, paused, ln.Lane)
		g(descConcurrency, float64(ln.Concurrency), ln.Lane)
		if ln.ETA.Seconds != nil {
			g(descETA, *ln.ETA.Seconds, ln.Lane)
		}
		reasons := map[string]float64{}
		for _, hr := range ln.Held {
			reasons[hr.Kind] += float64(hr.Count)
		}
		for r, n := range reasons {
			g(descHeld, n, ln.Lane, r)
		}
		// One series per task: two running files can carry one taskId
		// and a taskId may hold bytes that are not UTF-8 (both from files
		// anyone may drop); a duplicate or invalid series would fail the
		// whole scrape with a 500. The label is escaped as status shows it.
		seen := map[string]bool{}
		for _, r := range ln.Running {
			id := safetext.Text(r.TaskID)
			if seen[id] {
				continue
			}
			seen[id] = true
			g(descHeartbeat, r.HeartbeatAgeSeconds, ln.Lane, id)
		}
		collectSessions(g, ln)
		collectTokens(g, ln)
	}
	for _, a := range st.Accounts {
		g(descAccountHeld, 1, a.Account, a.Site)
		if a.Until != nil {
			g(descAccountHeldUntil, float64(a.Until.UnixMilli())/1000, a.Account)
		}
	}
}

var (
	descSession = prometheus.NewDesc("spoolgate_web_session",
		"1 for each web session's current state (running, idle, disabled, held, logged out, leased by another host, standby).", []string{"account", "site", "state"}, nil)
	descSessionTasks = prometheus.NewDesc("spoolgate_web_session_tasks",
		"Tasks whose last attempt ran on the account, by final state (success, failed).", []string{"account", "state"}, nil)
)

// collectSessions gives each web session's state and task counts as metrics.
func collectSessions(g func(d *prometheus.Desc, v float64, labels ...string), ln status.Lane) {
	for _, s := range ln.Sessions {
		g(descSession, 1, s.Account, s.Site, s.State)
		g(descSessionTasks, float64(s.Finished), s.Account, "success")
		g(descSessionTasks, float64(s.Failed), s.Account, "failed")
	}
}
