// Package alerts evaluates the alert rules of the configuration (stalled
// rounds, sources that stopped delivering, date errors, missed
// reprocessing periods, falling fill rates, dead letters) and delivers
// their events to webhooks.
//
// An alert fires once when its condition starts to hold and resolves once
// when it clears: between the two, evaluations change nothing. Which
// alerts are firing, and the events not yet delivered, are kept in the
// store (state "alerts"), so a restarted serve neither fires them again
// nor forgets to resolve them; every event is also appended to the
// journal (kind "alert"). Delivery is at least once: an event is kept and
// retried at each evaluation until a webhook accepts it (2xx) or
// MaxAttempts is reached.
//
// The package uses only the standard library and the domain; the clock
// and the HTTP client are injected.
package alerts

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// Names under which the engine keeps its state and journal.
const (
	StateName   = "alerts"
	JournalKind = "alert"
	LeaseName   = "alerts"
)

// DefaultMaxAttempts bounds the deliveries of one event to one webhook.
const DefaultMaxAttempts = 20

// Event statuses.
const (
	StatusFiring   = "firing"
	StatusResolved = "resolved"
)

// Doer sends HTTP requests; *http.Client is one.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Engine evaluates rules and delivers events. Fields are set before the
// first Evaluate.
type Engine struct {
	Store crawlkeeper.Store
	// Monitor answers the round and field rules; nil makes them report
	// that they need one.
	Monitor crawlkeeper.Monitor
	Config  crawlkeeper.AlertsConfig
	// Chain and Period describe the reprocessing pipeline, for the
	// freshness rule. Period defaults to the domain's default period.
	Chain  string
	Period time.Duration
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// HTTP delivers webhooks. Defaults to a client with a 10 s timeout.
	HTTP Doer
	// Owner, when set, makes Evaluate take the store lease "alerts" first,
	// so that only one of several processes sharing a store evaluates.
	Owner string
	// MaxAttempts bounds deliveries per event and webhook. Defaults to 20.
	MaxAttempts int
	Logger      *slog.Logger
}

// Alert is a firing alert.
type Alert struct {
	// Key identifies the alert: the rule name and the subject.
	Key     string `json:"key"`
	Rule    string `json:"rule"`
	Kind    string `json:"kind"`
	Subject string `json:"subject"`
	Message string `json:"message"`
	// Value is what was measured, Threshold what it was compared with
	// (seconds for durations, shares from 0 to 1, counts).
	Value     float64   `json:"value"`
	Threshold float64   `json:"threshold"`
	Since     time.Time `json:"since"`
}

// Event is an alert firing or resolving: what webhooks receive.
type Event struct {
	Status string    `json:"status"`
	At     time.Time `json:"at"`
	Alert  Alert     `json:"alert"`
	// Text is a one-line summary for people.
	Text string `json:"text"`
	// Resolution says why a resolved alert cleared.
	Resolution string `json:"resolution,omitempty"`
}

// RuleStatus is the outcome of a rule's last evaluation.
type RuleStatus struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Firing int    `json:"firing"`
	// Error is set when the rule could not be evaluated; its alerts keep
	// their state until it can.
	Error string `json:"error,omitempty"`
}

// delivery is one event waiting for one webhook.
type delivery struct {
	Webhook  string    `json:"webhook"`
	Format   string    `json:"format"`
	Event    Event     `json:"event"`
	Attempts int       `json:"attempts"`
	Error    string    `json:"error,omitempty"`
	Since    time.Time `json:"since"`
}

// State is what the engine keeps in the store between evaluations.
type State struct {
	EvaluatedAt *time.Time        `json:"evaluated_at,omitempty"`
	Active      map[string]*Alert `json:"active"`
	Rules       []RuleStatus      `json:"rules"`
	Outbox      []delivery        `json:"outbox"`
}

// Report is the outcome of one evaluation.
type Report struct {
	At       time.Time    `json:"at"`
	Skipped  bool         `json:"skipped,omitempty"` // another process holds the lease
	Fired    []Event      `json:"fired"`
	Resolved []Event      `json:"resolved"`
	Rules    []RuleStatus `json:"rules"`
	// Delivered counts webhook deliveries that succeeded; Pending those
	// kept for the next evaluation; Dropped those given up.
	Delivered int `json:"delivered"`
	Pending   int `json:"pending"`
	Dropped   int `json:"dropped"`
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Engine) logger() *slog.Logger {
	if e.Logger != nil {
		return e.Logger
	}
	return slog.New(slog.DiscardHandler)
}

func (e *Engine) client() Doer {
	if e.HTTP != nil {
		return e.HTTP
	}
	return &http.Client{Timeout: 10 * time.Second}
}

// LoadState reads the engine's state from the store; a store without one
// gives an empty state.
func LoadState(ctx context.Context, st crawlkeeper.StateStore) (*State, error) {
	b, err := st.GetState(ctx, StateName)
	if err != nil {
		return nil, fmt.Errorf("read alert state: %w", err)
	}
	s := &State{}
	if len(b) > 0 {
		if err := json.Unmarshal(b, s); err != nil {
			return nil, fmt.Errorf("read alert state: %w", err)
		}
	}
	if s.Active == nil {
		s.Active = map[string]*Alert{}
	}
	return s, nil
}

func (e *Engine) save(ctx context.Context, s *State) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := e.Store.PutState(ctx, StateName, b); err != nil {
		return fmt.Errorf("save alert state: %w", err)
	}
	return nil
}

// Evaluate runs every rule once, records the alerts that started or
// stopped firing, and delivers pending events to the webhooks. The state
// is saved before delivery, so a crash never fires an alert twice; an
// event not delivered yet is sent at a later evaluation.
func (e *Engine) Evaluate(ctx context.Context) (*Report, error) {
	now := e.now().UTC()
	rep := &Report{At: now, Fired: []Event{}, Resolved: []Event{}, Rules: []RuleStatus{}}
	if len(e.Config.Rules) == 0 {
		// Nothing to evaluate unless alerts of rules removed since are
		// still open or undelivered: then resolve and deliver them.
		st, err := LoadState(ctx, e.Store)
		if err != nil {
			return nil, err
		}
		if len(st.Active) == 0 && len(st.Outbox) == 0 {
			return rep, nil
		}
	}
	if e.Owner != "" {
		ok, err := e.Store.AcquireLease(ctx, LeaseName, e.Owner, 2*e.Config.EveryOrDefault()+time.Minute, now)
		if err != nil {
			return nil, fmt.Errorf("alert lease: %w", err)
		}
		if !ok {
			rep.Skipped = true
			return rep, nil
		}
	}
	st, err := LoadState(ctx, e.Store)
	if err != nil {
		return nil, err
	}
	evaluated := map[string]bool{} // rules that were evaluated without error
	configured := map[string]bool{}
	seen := map[string]bool{} // alert keys found firing now
	st.Rules = st.Rules[:0]
	for _, rule := range e.Config.Rules {
		name := rule.RuleName()
		configured[name] = true
		status := RuleStatus{Name: name, Kind: rule.Kind}
		findings, err := e.evaluate(ctx, rule, now)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			status.Error = crawlkeeper.ErrorMessage(err)
			if crawlkeeper.ErrorCode(err) == crawlkeeper.EINTERNAL {
				status.Error = err.Error()
			}
			e.logger().Warn("alert rule not evaluated", "rule", name, "err", err)
			st.Rules = append(st.Rules, status)
			continue
		}
		evaluated[name] = true
		for _, f := range findings {
			if !f.firing {
				continue
			}
			status.Firing++
			key := name + " | " + f.subject
			seen[key] = true
			if a := st.Active[key]; a != nil {
				// Still firing: keep the latest numbers, send nothing.
				a.Message, a.Value, a.Threshold = f.message, f.value, f.threshold
				continue
			}
			a := &Alert{Key: key, Rule: name, Kind: rule.Kind, Subject: f.subject, Message: f.message, Value: f.value, Threshold: f.threshold, Since: now}
			st.Active[key] = a
			rep.Fired = append(rep.Fired, newEvent(StatusFiring, now, *a, ""))
		}
		st.Rules = append(st.Rules, status)
	}
	keys := make([]string, 0, len(st.Active))
	for k := range st.Active {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a := st.Active[k]
		var why string
		switch {
		case seen[k]:
			continue
		case !configured[a.Rule]:
			why = "the rule is no longer configured"
		case !evaluated[a.Rule]:
			continue // the rule failed this time: keep the alert as it is
		default:
			why = fmt.Sprintf("the condition cleared after %s", roundDuration(now.Sub(a.Since)))
		}
		delete(st.Active, k)
		rep.Resolved = append(rep.Resolved, newEvent(StatusResolved, now, *a, why))
	}
	for _, ev := range append(append([]Event{}, rep.Fired...), rep.Resolved...) {
		b, _ := json.Marshal(ev)
		if err := e.Store.AppendJournal(ctx, JournalKind, now, b); err != nil {
			return nil, fmt.Errorf("journal alert: %w", err)
		}
		for _, w := range e.Config.Webhooks {
			st.Outbox = append(st.Outbox, delivery{Webhook: w.URL, Format: w.Format, Event: ev, Since: now})
		}
	}
	st.EvaluatedAt = &now
	if err := e.save(ctx, st); err != nil {
		return nil, err
	}
	if st.Rules != nil {
		rep.Rules = st.Rules
	}
	if len(st.Outbox) > 0 {
		e.deliver(ctx, st, rep)
		// Record the deliveries even when serve is stopping meanwhile, or
		// the next start would send them again.
		if err := e.save(context.WithoutCancel(ctx), st); err != nil {
			return nil, err
		}
	}
	for _, ev := range rep.Fired {
		e.logger().Warn("alert firing", "rule", ev.Alert.Rule, "subject", ev.Alert.Subject, "message", ev.Alert.Message)
	}
	for _, ev := range rep.Resolved {
		e.logger().Info("alert resolved", "rule", ev.Alert.Rule, "subject", ev.Alert.Subject, "why", ev.Resolution)
	}
	return rep, nil
}

func newEvent(status string, at time.Time, a Alert, resolution string) Event {
	ev := Event{Status: status, At: at, Alert: a, Resolution: resolution}
	if status == StatusFiring {
		ev.Text = fmt.Sprintf("[crawlkeeper] FIRING %s (%s): %s", a.Rule, a.Kind, a.Message)
	} else {
		ev.Text = fmt.Sprintf("[crawlkeeper] RESOLVED %s (%s): %s; %s", a.Rule, a.Kind, a.Subject, resolution)
	}
	return ev
}

// deliver sends the outbox in order and keeps what failed.
func (e *Engine) deliver(ctx context.Context, st *State, rep *Report) {
	maxAttempts := e.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = DefaultMaxAttempts
	}
	kept := st.Outbox[:0]
	for _, d := range st.Outbox {
		if ctx.Err() != nil {
			kept = append(kept, d)
			continue
		}
		err := e.post(ctx, d)
		if err == nil {
			rep.Delivered++
			continue
		}
		d.Attempts++
		d.Error = err.Error()
		if d.Attempts >= maxAttempts {
			rep.Dropped++
			e.logger().Error("alert not delivered; giving up", "webhook", redact(d.Webhook), "rule", d.Event.Alert.Rule, "status", d.Event.Status, "attempts", d.Attempts, "err", err)
			continue
		}
		e.logger().Warn("alert not delivered; retrying at the next evaluation", "webhook", redact(d.Webhook), "rule", d.Event.Alert.Rule, "attempts", d.Attempts, "err", err)
		kept = append(kept, d)
	}
	st.Outbox = kept
	rep.Pending = len(kept)
}

// Body returns the webhook body of ev in format "json" or "slack".
func Body(format string, ev Event) ([]byte, error) {
	if format == "slack" {
		icon := ":rotating_light:"
		if ev.Status == StatusResolved {
			icon = ":white_check_mark:"
		}
		return json.Marshal(map[string]string{"text": icon + " " + ev.Text})
	}
	return json.Marshal(ev)
}

func (e *Engine) post(ctx context.Context, d delivery) error {
	body, err := Body(d.Format, d.Event)
	if err != nil {
		return err
	}
	// A delivery under way finishes even when serve is stopping: cut off,
	// the receiver may have the event while the state says it has not,
	// and the next start would send it twice.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.Webhook, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "crawlkeeper-alerts")
	resp, err := e.client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook answered %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}

// redact hides the path of a webhook URL in logs: Slack-style webhooks
// carry their secret there.
func redact(raw string) string {
	if i := strings.Index(raw, "://"); i >= 0 {
		if j := strings.IndexByte(raw[i+3:], '/'); j >= 0 {
			return raw[:i+3+j] + "/..."
		}
	}
	return raw
}

// Listing is what the API shows of alerts: what fires now, each rule's
// last outcome and the latest events.
type Listing struct {
	EvaluatedAt *time.Time   `json:"evaluated_at"`
	Firing      []Alert      `json:"firing"`
	Rules       []RuleStatus `json:"rules"`
	Recent      []Event      `json:"recent"`
	// Undelivered counts webhook deliveries waiting for a retry.
	Undelivered int `json:"undelivered"`
	Webhooks    int `json:"webhooks"`
}

// List reads the alert state and the newest events (up to limit) from
// the store, so every process sharing it shows the same.
func List(ctx context.Context, st crawlkeeper.StateStore, cfg crawlkeeper.AlertsConfig, limit int) (*Listing, error) {
	s, err := LoadState(ctx, st)
	if err != nil {
		return nil, err
	}
	l := &Listing{EvaluatedAt: s.EvaluatedAt, Firing: []Alert{}, Rules: s.Rules, Recent: []Event{}, Undelivered: len(s.Outbox), Webhooks: len(cfg.Webhooks)}
	if l.Rules == nil {
		l.Rules = []RuleStatus{}
	}
	for _, a := range s.Active {
		l.Firing = append(l.Firing, *a)
	}
	sort.Slice(l.Firing, func(i, j int) bool {
		if !l.Firing[i].Since.Equal(l.Firing[j].Since) {
			return l.Firing[i].Since.Before(l.Firing[j].Since)
		}
		return l.Firing[i].Key < l.Firing[j].Key
	})
	entries, err := st.Journal(ctx, JournalKind, limit)
	if err != nil {
		return nil, err
	}
	for _, j := range entries {
		var ev Event
		if json.Unmarshal(j.Body, &ev) == nil {
			l.Recent = append(l.Recent, ev)
		}
	}
	return l, nil
}
