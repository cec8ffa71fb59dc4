package alerts_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/alerts"
	"github.com/crawlkeeper/crawlkeeper/backends"
)

var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// receiver is a local webhook endpoint that records what it gets; fail
// makes it answer 500 that many times first.
type receiver struct {
	mu     sync.Mutex
	bodies [][]byte
	fail   int
	srv    *httptest.Server
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		if req.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "want JSON", http.StatusUnsupportedMediaType)
			return
		}
		if r.fail > 0 {
			r.fail--
			http.Error(w, "receiver down", http.StatusInternalServerError)
			return
		}
		r.bodies = append(r.bodies, b)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// take returns the bodies received since the last call.
func (r *receiver) take() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.bodies
	r.bodies = nil
	return out
}

func (r *receiver) events(t *testing.T) []alerts.Event {
	t.Helper()
	var out []alerts.Event
	for _, b := range r.take() {
		var ev alerts.Event
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatalf("webhook body %s: %v", b, err)
		}
		out = append(out, ev)
	}
	return out
}

// world is a store with the embedded monitor, an ingester and a clock
// that the test moves.
type world struct {
	t     *testing.T
	store crawlkeeper.Store
	mon   crawlkeeper.Monitor
	now   time.Time
	cfg   *crawlkeeper.Config
}

func newWorld(t *testing.T, cfg *crawlkeeper.Config) *world {
	t.Helper()
	ctx := context.Background()
	st, err := backends.OpenStore(ctx, "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if cfg == nil {
		cfg = &crawlkeeper.Config{}
	}
	mon, err := backends.OpenMonitor(ctx, "", st, cfg.MonitorOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mon.Close() })
	return &world{t: t, store: st, mon: mon, now: t0, cfg: cfg}
}

func (w *world) clock() time.Time { return w.now }

func (w *world) ingest(source, round, lines string) {
	w.t.Helper()
	_, inStore := w.mon.(crawlkeeper.TxMarker)
	g := &crawlkeeper.Ingester{Store: w.store, Config: w.cfg, Now: w.clock, MarksInStore: inStore, Monitor: w.mon,
		AfterCommit: []crawlkeeper.AfterCommit{crawlkeeper.FieldObserver(w.mon, nil)}}
	sum, err := g.Ingest(context.Background(), strings.NewReader(lines), crawlkeeper.Meta{Source: source, Round: round})
	if err != nil || sum.Rejected > 0 {
		w.t.Fatalf("ingest: %v %+v", err, sum)
	}
}

func (w *world) engine(rules []crawlkeeper.AlertRule, hooks ...crawlkeeper.WebhookConfig) *alerts.Engine {
	return &alerts.Engine{
		Store: w.store, Monitor: w.mon, Now: w.clock, HTTP: http.DefaultClient,
		Config: crawlkeeper.AlertsConfig{Rules: rules, Webhooks: hooks},
	}
}

func (w *world) evaluate(e *alerts.Engine) *alerts.Report {
	w.t.Helper()
	rep, err := e.Evaluate(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	return rep
}

func counts(rep *alerts.Report) string {
	return fmt.Sprintf("fired %d, resolved %d", len(rep.Fired), len(rep.Resolved))
}

func TestRoundStalledFiresOnceAndResolves(t *testing.T) {
	w := newWorld(t, nil)
	ctx := context.Background()
	jsonHook, slackHook := newReceiver(t), newReceiver(t)
	rules := []crawlkeeper.AlertRule{{Name: "stalled", Kind: crawlkeeper.AlertRoundStalled, Buckets: 3}}
	hooks := []crawlkeeper.WebhookConfig{{URL: jsonHook.srv.URL}, {URL: slackHook.srv.URL + "/services/T000/B000/secret", Format: "slack"}}
	if _, err := w.mon.Queue(ctx, crawlkeeper.QueueRequest{Round: "1", Targets: []string{"a", "b", "c"}, Bucket: 10 * time.Minute, At: t0}); err != nil {
		t.Fatal(err)
	}
	w.now = t0.Add(time.Minute)
	if _, err := w.mon.Mark(ctx, []crawlkeeper.Mark{{Round: "1", Target: "a", Kind: crawlkeeper.MarkDone, At: w.now}}); err != nil {
		t.Fatal(err)
	}
	e := w.engine(rules, hooks...)

	// The last progress counts at the end of its bucket (10:10): three idle
	// buckets end at 10:40.
	for _, at := range []time.Duration{20 * time.Minute, 39*time.Minute + 59*time.Second} {
		w.now = t0.Add(at)
		if rep := w.evaluate(e); len(rep.Fired) != 0 {
			t.Fatalf("at +%s: %s", at, counts(rep))
		}
	}
	w.now = t0.Add(40 * time.Minute)
	rep := w.evaluate(e)
	if len(rep.Fired) != 1 || rep.Delivered != 2 || rep.Pending != 0 {
		t.Fatalf("at +40m: %s, delivered %d, pending %d", counts(rep), rep.Delivered, rep.Pending)
	}
	evs := jsonHook.events(t)
	if len(evs) != 1 || evs[0].Status != alerts.StatusFiring || evs[0].Alert.Rule != "stalled" || evs[0].Alert.Subject != "round 1" ||
		!strings.Contains(evs[0].Alert.Message, "2 of 3 targets remain") || !evs[0].Alert.Since.Equal(w.now) {
		t.Fatalf("json webhook got %+v", evs)
	}
	slack := slackHook.take()
	var text map[string]string
	if len(slack) != 1 || json.Unmarshal(slack[0], &text) != nil || len(text) != 1 || !strings.Contains(text["text"], "FIRING stalled") {
		t.Fatalf("slack webhook got %s", slack)
	}

	// While the condition holds nothing is sent again, also after a
	// restart (a new engine reads the stored state).
	w.now = t0.Add(50 * time.Minute)
	w.evaluate(e)
	restarted := w.engine(rules, hooks...)
	w.now = t0.Add(55 * time.Minute)
	if rep := w.evaluate(restarted); len(rep.Fired)+len(rep.Resolved) != 0 {
		t.Fatalf("after restart: %s", counts(rep))
	}
	if got := len(jsonHook.take()) + len(slackHook.take()); got != 0 {
		t.Fatalf("%d webhook calls while the alert kept firing", got)
	}

	// Progress clears it: one resolved message per webhook.
	if _, err := w.mon.Mark(ctx, []crawlkeeper.Mark{{Round: "1", Target: "b", Kind: crawlkeeper.MarkDone, At: w.now}}); err != nil {
		t.Fatal(err)
	}
	w.now = t0.Add(56 * time.Minute)
	rep = w.evaluate(restarted)
	if len(rep.Resolved) != 1 || len(rep.Fired) != 0 {
		t.Fatalf("after progress: %s", counts(rep))
	}
	evs = jsonHook.events(t)
	if len(evs) != 1 || evs[0].Status != alerts.StatusResolved || !strings.Contains(evs[0].Resolution, "cleared after 16m") {
		t.Fatalf("resolved event %+v", evs)
	}
	if s := slackHook.take(); len(s) != 1 || !strings.Contains(string(s[0]), "RESOLVED stalled") {
		t.Fatalf("slack resolved %s", s)
	}
	w.now = t0.Add(57 * time.Minute)
	if rep := w.evaluate(restarted); len(rep.Fired)+len(rep.Resolved) != 0 {
		t.Fatalf("after resolving: %s", counts(rep))
	}

	// The API listing: nothing firing, both events in the journal.
	l, err := alerts.List(ctx, w.store, e.Config, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Firing) != 0 || len(l.Recent) != 2 || l.Recent[0].Status != alerts.StatusResolved || len(l.Rules) != 1 || l.Webhooks != 2 {
		t.Fatalf("listing %+v", l)
	}
}

func TestRoundDoneIsNotStalled(t *testing.T) {
	w := newWorld(t, nil)
	ctx := context.Background()
	w.mon.Queue(ctx, crawlkeeper.QueueRequest{Round: "1", Targets: []string{"a"}, Bucket: 10 * time.Minute, At: t0})
	w.mon.Mark(ctx, []crawlkeeper.Mark{{Round: "1", Target: "a", Kind: crawlkeeper.MarkDone, At: t0}})
	// A newer round that nobody queued targets for has nothing remaining.
	w.mon.Mark(ctx, []crawlkeeper.Mark{{Round: "2", Target: "a", Kind: crawlkeeper.MarkDone, At: t0.Add(time.Minute)}})
	w.now = t0.Add(24 * time.Hour)
	e := w.engine([]crawlkeeper.AlertRule{{Kind: crawlkeeper.AlertRoundStalled}, {Kind: crawlkeeper.AlertRoundStalled, Round: "1"}})
	if rep := w.evaluate(e); len(rep.Fired) != 0 {
		t.Fatalf("%s: %+v", counts(rep), rep.Fired)
	}
}

// TestRoundPrefixWatchesEachCrawlersNewestRound: two crawlers start
// rounds side by side; a rule with round_prefix watches the newest round
// of its crawler, however many rounds the other one starts meanwhile.
func TestRoundPrefixWatchesEachCrawlersNewestRound(t *testing.T) {
	w := newWorld(t, nil)
	ctx := context.Background()
	w.mon.Queue(ctx, crawlkeeper.QueueRequest{Round: "events-1", Targets: []string{"a", "b"}, Bucket: 10 * time.Minute, At: t0})
	w.mon.Mark(ctx, []crawlkeeper.Mark{{Round: "events-1", Target: "a", Kind: crawlkeeper.MarkDone, At: t0}})
	// The news crawler keeps going, round after round.
	for i := 1; i <= 4; i++ {
		at := t0.Add(time.Duration(i) * 15 * time.Minute)
		round := fmt.Sprintf("news-%d", i)
		w.mon.Queue(ctx, crawlkeeper.QueueRequest{Round: round, Targets: []string{"x"}, Bucket: 10 * time.Minute, At: at})
		w.mon.Mark(ctx, []crawlkeeper.Mark{{Round: round, Target: "x", Kind: crawlkeeper.MarkDone, At: at}})
	}
	w.now = t0.Add(65 * time.Minute)
	rules := []crawlkeeper.AlertRule{
		{Kind: crawlkeeper.AlertRoundStalled, RoundPrefix: "events-"},
		{Kind: crawlkeeper.AlertRoundStalled, RoundPrefix: "news-"},
		{Kind: crawlkeeper.AlertRoundStalled},
	}
	cfg := crawlkeeper.AlertsConfig{Rules: rules}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	rep := w.evaluate(w.engine(rules))
	if len(rep.Fired) != 1 || rep.Fired[0].Alert.Rule != "round_stalled:events-*" || rep.Fired[0].Alert.Subject != "round events-1" {
		t.Fatalf("%s: %+v", counts(rep), rep.Fired)
	}
	bad := crawlkeeper.AlertsConfig{Rules: []crawlkeeper.AlertRule{{Kind: crawlkeeper.AlertRoundStalled, Round: "1", RoundPrefix: "events-"}}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "round_prefix") {
		t.Fatalf("round and round_prefix together: %v", err)
	}
}

func TestIngestStopped(t *testing.T) {
	w := newWorld(t, nil)
	w.ingest("jobs", "", `{"title":"a","url":"https://j.example/a"}`)
	w.ingest("news", "", `{"title":"n","url":"https://n.example/n"}`)
	e := w.engine([]crawlkeeper.AlertRule{{Kind: crawlkeeper.AlertIngestStopped, For: crawlkeeper.Duration(time.Hour)}})
	w.now = t0.Add(30 * time.Minute)
	w.ingest("news", "", `{"title":"n2","url":"https://n.example/n2"}`)
	w.now = t0.Add(61 * time.Minute)
	rep := w.evaluate(e)
	if len(rep.Fired) != 1 || rep.Fired[0].Alert.Subject != "source jobs" || !strings.Contains(rep.Fired[0].Alert.Message, "nothing delivered for 1h1m") {
		t.Fatalf("%s: %+v", counts(rep), rep.Fired)
	}
	// Deliveries resume: resolved. A manual archive does not hide a
	// source: archived records count as delivered too.
	w.ingest("jobs", "", `{"title":"a","url":"https://j.example/a"}`)
	w.now = t0.Add(62 * time.Minute)
	if rep := w.evaluate(e); len(rep.Resolved) != 1 || len(rep.Fired) != 0 {
		t.Fatalf("after a delivery: %s", counts(rep))
	}
	w.now = t0.Add(100 * time.Minute)
	rep = w.evaluate(e)
	if len(rep.Fired) != 1 || rep.Fired[0].Alert.Subject != "source news" {
		t.Fatalf("news: %s %+v", counts(rep), rep.Fired)
	}
}

func TestDateErrors(t *testing.T) {
	w := newWorld(t, nil)
	w.ingest("jobs", "", `{"title":"a","url":"https://j.example/a","deadline":"2026-05-01"}
{"title":"b","url":"https://j.example/b","deadline":"when the position is filled, maybe"}
{"title":"c","url":"https://j.example/c"}`)
	for _, tc := range []struct {
		threshold float64
		fires     bool
	}{{0.5, false}, {0.3, true}} {
		e := w.engine([]crawlkeeper.AlertRule{{Name: fmt.Sprint(tc.threshold), Kind: crawlkeeper.AlertDateErrors, Threshold: tc.threshold}})
		rep := w.evaluate(e)
		if (len(rep.Fired) == 1) != tc.fires {
			t.Fatalf("threshold %v: %s", tc.threshold, counts(rep))
		}
		if tc.fires && !strings.Contains(rep.Fired[0].Alert.Message, "33.3% of active records have unreadable dates (1 of 3)") {
			t.Fatalf("message %q", rep.Fired[0].Alert.Message)
		}
	}
}

func TestFreshness(t *testing.T) {
	w := newWorld(t, nil)
	ctx := context.Background()
	w.ingest("jobs", "", `{"title":"a","url":"https://j.example/a"}
{"title":"b","url":"https://j.example/b"}`)
	e := w.engine([]crawlkeeper.AlertRule{{Kind: crawlkeeper.AlertFreshness}})
	e.Chain, e.Period = "dates@1", 24*time.Hour
	if rep := w.evaluate(e); len(rep.Fired) != 0 {
		t.Fatalf("nothing processed yet: %s", counts(rep))
	}
	recs, _ := w.store.ScanActive(ctx, 0, 0, 10)
	var ws []crawlkeeper.ProcessedWrite
	for i, r := range recs {
		ws = append(ws, crawlkeeper.ProcessedWrite{ID: r.ID, Version: r.Version, ProcessedAt: t0.Add(time.Duration(i) * time.Hour), Chain: "dates@1", Derived: json.RawMessage(`{}`)})
	}
	if _, err := w.store.WriteProcessed(ctx, ws); err != nil {
		t.Fatal(err)
	}
	w.now = t0.Add(24 * time.Hour)
	if rep := w.evaluate(e); len(rep.Fired) != 0 {
		t.Fatalf("at the period: %s", counts(rep))
	}
	w.now = t0.Add(24*time.Hour + time.Second)
	rep := w.evaluate(e)
	if len(rep.Fired) != 1 || !strings.Contains(rep.Fired[0].Alert.Message, "processed 1d ago") && !strings.Contains(rep.Fired[0].Alert.Message, "24h0m1s") {
		t.Fatalf("past the period: %s %+v", counts(rep), rep.Fired)
	}
}

func TestFillRateDropAgainstThePreviousRound(t *testing.T) {
	cfg := &crawlkeeper.Config{Sources: map[string]crawlkeeper.SourceConfig{"jobs": {WatchFields: []string{"salary"}}}}
	w := newWorld(t, cfg)
	ctx := context.Background()
	var r1, r2 strings.Builder
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&r1, `{"title":"j%d","url":"https://j.example/%d","salary":"%d"}`+"\n", i, i, 1000+i)
		salary := ""
		if i < 5 {
			salary = fmt.Sprint(1000 + i)
		}
		fmt.Fprintf(&r2, `{"title":"j%d","url":"https://j.example/%d","salary":"%s"}`+"\n", i, i, salary)
	}
	w.mon.Queue(ctx, crawlkeeper.QueueRequest{Round: "1", Targets: []string{"x"}, At: t0})
	w.ingest("jobs", "1", r1.String())
	e := w.engine([]crawlkeeper.AlertRule{{Name: "salary", Kind: crawlkeeper.AlertFillRate, Field: "salary", Threshold: 0.3}})
	if rep := w.evaluate(e); len(rep.Fired) != 0 {
		t.Fatalf("one round only: %s", counts(rep))
	}
	w.now = t0.Add(time.Hour)
	w.mon.Queue(ctx, crawlkeeper.QueueRequest{Round: "2", Targets: []string{"x"}, At: w.now})
	w.ingest("jobs", "2", r2.String())
	rep := w.evaluate(e)
	if len(rep.Fired) != 1 || rep.Fired[0].Alert.Subject != "source jobs field salary" ||
		!strings.Contains(rep.Fired[0].Alert.Message, "fill rate 50.0% in round 2 against 100.0% in round 1") {
		t.Fatalf("%s: %+v", counts(rep), rep.Fired)
	}
	// A 30% drop is allowed: 0.5 is within it only when the threshold is
	// 0.5 or more.
	loose := w.engine([]crawlkeeper.AlertRule{{Name: "loose", Kind: crawlkeeper.AlertFillRate, Field: "salary", Threshold: 0.5}})
	if rep := w.evaluate(loose); len(rep.Fired) != 0 {
		t.Fatalf("threshold 0.5: %s", counts(rep))
	}
}

func TestDeadLettersAndDeliveryRetries(t *testing.T) {
	w := newWorld(t, nil)
	ctx := context.Background()
	hook, flaky := newReceiver(t), newReceiver(t)
	flaky.fail = 2
	e := w.engine([]crawlkeeper.AlertRule{{Kind: crawlkeeper.AlertDeadLetters, Threshold: 1}},
		crawlkeeper.WebhookConfig{URL: hook.srv.URL}, crawlkeeper.WebhookConfig{URL: flaky.srv.URL})
	for id := int64(1); id <= 2; id++ {
		if err := w.store.AddDeadLetter(ctx, crawlkeeper.DeadLetter{ID: id, Version: 1, Processor: "exec", Error: "boom", Failures: 3, At: t0}); err != nil {
			t.Fatal(err)
		}
	}
	rep := w.evaluate(e)
	if len(rep.Fired) != 1 || rep.Delivered != 1 || rep.Pending != 1 {
		t.Fatalf("first: %s, delivered %d, pending %d", counts(rep), rep.Delivered, rep.Pending)
	}
	// The failed delivery is retried at the next evaluations and reaches
	// the flaky receiver once; the other receiver gets nothing twice.
	w.now = t0.Add(time.Minute)
	if rep := w.evaluate(e); rep.Pending != 1 || rep.Delivered != 0 {
		t.Fatalf("second: delivered %d, pending %d", rep.Delivered, rep.Pending)
	}
	w.now = t0.Add(2 * time.Minute)
	if rep := w.evaluate(e); rep.Pending != 0 || rep.Delivered != 1 {
		t.Fatalf("third: delivered %d, pending %d", rep.Delivered, rep.Pending)
	}
	if a, b := len(hook.take()), len(flaky.take()); a != 1 || b != 1 {
		t.Fatalf("deliveries: %d and %d, want 1 each", a, b)
	}
	w.store.RemoveDeadLetters(ctx, []int64{1})
	if rep := w.evaluate(e); len(rep.Resolved) != 1 {
		t.Fatalf("after a retry: %s", counts(rep))
	}
}

func TestDeliveryGivesUpAfterMaxAttempts(t *testing.T) {
	w := newWorld(t, nil)
	dead := newReceiver(t)
	dead.fail = 100
	w.store.AddDeadLetter(context.Background(), crawlkeeper.DeadLetter{ID: 1, Version: 1, Processor: "exec", Error: "boom", At: t0})
	e := w.engine([]crawlkeeper.AlertRule{{Kind: crawlkeeper.AlertDeadLetters}}, crawlkeeper.WebhookConfig{URL: dead.srv.URL})
	e.MaxAttempts = 2
	if rep := w.evaluate(e); rep.Pending != 1 {
		t.Fatalf("pending %d", rep.Pending)
	}
	if rep := w.evaluate(e); rep.Pending != 0 || rep.Dropped != 1 {
		t.Fatalf("pending %d, dropped %d", rep.Pending, rep.Dropped)
	}
}

func TestRuleErrorsKeepAlertsAndRemovedRulesResolve(t *testing.T) {
	w := newWorld(t, nil)
	ctx := context.Background()
	w.mon.Queue(ctx, crawlkeeper.QueueRequest{Round: "1", Targets: []string{"a"}, Bucket: time.Minute, At: t0})
	rules := []crawlkeeper.AlertRule{{Kind: crawlkeeper.AlertRoundStalled}}
	w.now = t0.Add(time.Hour)
	if rep := w.evaluate(w.engine(rules)); len(rep.Fired) != 1 {
		t.Fatalf("%s", counts(rep))
	}
	// Without a monitor the rule cannot be evaluated: the alert stays.
	blind := w.engine(rules)
	blind.Monitor = nil
	rep := w.evaluate(blind)
	if len(rep.Fired)+len(rep.Resolved) != 0 || len(rep.Rules) != 1 || !strings.Contains(rep.Rules[0].Error, "no crawl monitor") {
		t.Fatalf("without a monitor: %s, rules %+v", counts(rep), rep.Rules)
	}
	// Removing the rule from the configuration resolves its alerts.
	rep = w.evaluate(w.engine(nil))
	if len(rep.Resolved) != 1 || rep.Resolved[0].Resolution != "the rule is no longer configured" {
		t.Fatalf("rule removed: %s %+v", counts(rep), rep.Resolved)
	}
}

func TestLeaseLetsOneProcessEvaluate(t *testing.T) {
	w := newWorld(t, nil)
	rules := []crawlkeeper.AlertRule{{Kind: crawlkeeper.AlertDeadLetters}}
	a, b := w.engine(rules), w.engine(rules)
	a.Owner, b.Owner = "host-1", "host-2"
	if rep := w.evaluate(a); rep.Skipped {
		t.Fatal("first owner skipped")
	}
	if rep := w.evaluate(b); !rep.Skipped {
		t.Fatal("second owner evaluated while the first holds the lease")
	}
}

func TestBodies(t *testing.T) {
	ev := alerts.Event{Status: alerts.StatusFiring, Text: "[crawlkeeper] FIRING x (dead_letters): 3 records", Alert: alerts.Alert{Rule: "x"}}
	b, _ := alerts.Body("slack", ev)
	if string(b) != `{"text":":rotating_light: [crawlkeeper] FIRING x (dead_letters): 3 records"}` {
		t.Fatalf("slack body %s", b)
	}
	b, _ = alerts.Body("json", ev)
	var back alerts.Event
	if json.Unmarshal(b, &back) != nil || back.Alert.Rule != "x" || back.Status != "firing" {
		t.Fatalf("json body %s", b)
	}
}
