package dashboard

import (
	"context"
	"net/http"
	"sort"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/alerts"
)

// alertEventsShown bounds the alert history on the Alerts page.
const alertEventsShown = 100

// firingAlerts reads the alerts firing now from the store, where the
// alert engine keeps them, so every process sharing the store shows the
// same banner. A failed read leaves the banner out (and is logged): the
// page itself still renders.
func (d *dash) firingAlerts(ctx context.Context) []alerts.Alert {
	st, err := alerts.LoadState(ctx, d.o.Store)
	if err != nil {
		d.o.Logger.Warn("read the alert state", "err", err)
		return nil
	}
	out := make([]alerts.Alert, 0, len(st.Active))
	for _, a := range st.Active {
		out = append(out, *a)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Since.Equal(out[j].Since) {
			return out[i].Since.Before(out[j].Since)
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// alertBadges maps the subjects of firing alerts to the rules that fire
// on them: rounds ("round NAME") and sources ("source NAME", also for a
// source's field), so the rounds and sources tables can mark their rows.
type alertBadges struct {
	Rounds  map[string][]string
	Sources map[string][]string
}

func badges(firing []alerts.Alert) alertBadges {
	b := alertBadges{Rounds: map[string][]string{}, Sources: map[string][]string{}}
	for _, a := range firing {
		switch {
		case strings.HasPrefix(a.Subject, "round "):
			name := strings.TrimPrefix(a.Subject, "round ")
			b.Rounds[name] = append(b.Rounds[name], a.Rule)
		case strings.HasPrefix(a.Subject, "source "):
			name := strings.TrimPrefix(a.Subject, "source ")
			// "source S field F": the badge goes on source S.
			if i := strings.Index(name, " field "); i >= 0 {
				name = name[:i]
			}
			b.Sources[name] = append(b.Sources[name], a.Rule)
		}
	}
	return b
}

// ruleRow is one configured rule with its last evaluation.
type ruleRow struct {
	crawlkeeper.AlertRule
	Name string
	// Params describes the rule's parameters ("source news, for 4h").
	Params string
	Status *alerts.RuleStatus
}

type alertsData struct {
	Listing *alerts.Listing
	Rules   []ruleRow
	Every   string
}

func (d *dash) alertsPage(w http.ResponseWriter, r *http.Request, v *view) error {
	cfg := d.config().Alerts
	l, err := alerts.List(r.Context(), d.o.Store, cfg, alertEventsShown)
	if err != nil {
		return err
	}
	data := alertsData{Listing: l, Every: fmtDuration(cfg.EveryOrDefault())}
	status := map[string]*alerts.RuleStatus{}
	for i := range l.Rules {
		status[l.Rules[i].Name] = &l.Rules[i]
	}
	for _, rule := range cfg.Rules {
		data.Rules = append(data.Rules, ruleRow{AlertRule: rule, Name: rule.RuleName(), Params: ruleParams(rule), Status: status[rule.RuleName()]})
	}
	v.Title, v.Nav, v.Data = "Alerts", "alerts", data
	d.render(w, "alerts", v)
	return nil
}

// ruleParams describes a rule's parameters, defaults spelled out.
func ruleParams(r crawlkeeper.AlertRule) string {
	var p []string
	add := func(k, v string) {
		if v != "" {
			p = append(p, k+" "+v)
		}
	}
	add("source", r.Source)
	add("round", r.Round)
	if r.RoundPrefix != "" {
		add("rounds", r.RoundPrefix+"*")
	}
	add("field", r.Field)
	switch r.Kind {
	case crawlkeeper.AlertRoundStalled:
		n := r.Buckets
		if n <= 0 {
			n = crawlkeeper.DefaultStallBuckets
		}
		add("idle buckets", num(n))
	case crawlkeeper.AlertIngestStopped:
		f := r.For
		if f <= 0 {
			f = crawlkeeper.Duration(crawlkeeper.DefaultIngestStoppedFor)
		}
		add("for", fmtDuration(f.D()))
	case crawlkeeper.AlertFreshness:
		if r.For > 0 {
			add("period", fmtDuration(r.For.D()))
		} else {
			add("period", "pipeline.period")
		}
	case crawlkeeper.AlertDateErrors:
		t := r.Threshold
		if t <= 0 {
			t = crawlkeeper.DefaultDateErrorThreshold
		}
		add("above", pct(t))
	case crawlkeeper.AlertFillRate:
		t := r.Threshold
		if t <= 0 {
			t = crawlkeeper.DefaultFillRateDrop
		}
		add("drop above", pct(t))
	case crawlkeeper.AlertDeadLetters:
		add("more than", num(r.Threshold))
	}
	return strings.Join(p, ", ")
}

// config returns the configuration, or the defaults when none was given.
func (d *dash) config() *crawlkeeper.Config {
	if d.o.Config != nil {
		return d.o.Config
	}
	return &crawlkeeper.Config{}
}
