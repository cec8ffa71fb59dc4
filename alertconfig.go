package crawlkeeper

import (
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Alert rule kinds.
const (
	// AlertRoundStalled fires when a round has targets remaining and none
	// was done in the last Buckets buckets.
	AlertRoundStalled = "round_stalled"
	// AlertIngestStopped fires when a source that has records got no
	// delivery for the period For.
	AlertIngestStopped = "ingest_stopped"
	// AlertDateErrors fires when the share of a source's active records
	// with unreadable dates is above Threshold.
	AlertDateErrors = "date_errors"
	// AlertFreshness fires when the oldest processed record was processed
	// longer ago than the period: a rescan pass missed its deadline.
	AlertFreshness = "freshness"
	// AlertFillRate fires when a watched field's fill rate in a round is
	// more than Threshold (relative) below the round before.
	AlertFillRate = "fill_rate"
	// AlertDeadLetters fires when there are more than Threshold dead
	// letters.
	AlertDeadLetters = "dead_letters"
)

// AlertKinds lists every rule kind.
var AlertKinds = []string{AlertRoundStalled, AlertIngestStopped, AlertDateErrors, AlertFreshness, AlertFillRate, AlertDeadLetters}

// Alert defaults. AlertRule documents which field falls back to which.
const (
	DefaultAlertEvery         = time.Minute
	DefaultStallBuckets       = 3
	DefaultIngestStoppedFor   = time.Hour
	DefaultDateErrorThreshold = 0.05
	DefaultFillRateDrop       = 0.2
)

// RuleName returns the rule's name, or the default one built from its
// kind and parameters.
func (r AlertRule) RuleName() string {
	if r.Name != "" {
		return r.Name
	}
	parts := []string{r.Kind}
	for _, p := range []string{r.Source, r.Round, r.Field} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if r.RoundPrefix != "" {
		parts = append(parts, r.RoundPrefix+"*")
	}
	return strings.Join(parts, ":")
}

// EveryOrDefault returns how often rules are evaluated.
func (c AlertsConfig) EveryOrDefault() time.Duration {
	if c.Every > 0 {
		return c.Every.D()
	}
	return DefaultAlertEvery
}

// Validate checks the alerts section: known kinds with the parameters
// they need, unique names and usable webhooks.
func (c AlertsConfig) Validate() error {
	seen := map[string]bool{}
	for i, r := range c.Rules {
		where := "config: alerts.rules[" + strconv.Itoa(i) + "]"
		known := false
		for _, k := range AlertKinds {
			known = known || r.Kind == k
		}
		if !known {
			return Errorf(EINVALID, "%s: kind %q: use one of %s", where, r.Kind, strings.Join(AlertKinds, ", "))
		}
		name := r.RuleName()
		if seen[name] {
			return Errorf(EINVALID, "%s: another rule is named %q; give each rule its own name", where, name)
		}
		seen[name] = true
		if r.Threshold < 0 || r.Buckets < 0 {
			return Errorf(EINVALID, "%s (%s): threshold and buckets must not be negative", where, name)
		}
		switch r.Kind {
		case AlertFillRate:
			if r.Field == "" {
				return Errorf(EINVALID, "%s (%s): fill_rate needs the watched field: add field: NAME", where, name)
			}
			if r.Threshold >= 1 {
				return Errorf(EINVALID, "%s (%s): threshold is the relative drop of the fill rate, from 0 to 1 (0.2 = 20%% lower)", where, name)
			}
		case AlertDateErrors:
			if r.Threshold >= 1 {
				return Errorf(EINVALID, "%s (%s): threshold is a share of records, from 0 to 1 (0.05 = 5%%)", where, name)
			}
		}
		if r.RoundPrefix != "" && (r.Kind != AlertRoundStalled || r.Round != "") {
			return Errorf(EINVALID, "%s (%s): round_prefix is for round_stalled rules without round", where, name)
		}
		if r.Round != "" {
			if err := ValidateRound(r.Round); err != nil {
				return Errorf(EINVALID, "%s (%s): %s", where, name, ErrorMessage(err))
			}
		}
	}
	for i, w := range c.Webhooks {
		where := "config: alerts.webhooks[" + strconv.Itoa(i) + "]"
		u, err := url.Parse(w.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Errorf(EINVALID, "%s: url %q: use an http or https URL", where, w.URL)
		}
		if w.Format != "" && w.Format != "json" && w.Format != "slack" {
			return Errorf(EINVALID, "%s: format %q: use json or slack", where, w.Format)
		}
	}
	return nil
}
