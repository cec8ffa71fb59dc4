package crawlkeeper

import "time"

// Rules are the archive rules of a configuration: when a record has
// expired and why.
type Rules struct {
	Config *Config
}

// NewRules returns the rules of cfg (nil means all defaults).
func NewRules(cfg *Config) *Rules {
	if cfg == nil {
		cfg = &Config{}
	}
	return &Rules{Config: cfg}
}

// Due reports whether rec has expired at now and the reason. Rules are
// checked in order event, stale, age: the record's own deadline is the most
// specific reason. Each boundary is inclusive: a record whose deadline
// ends at midnight is due at midnight.
func (r *Rules) Due(rec *Record, now time.Time) (ArchiveReason, bool) {
	p, err := r.Config.Policy(rec.Source)
	if err != nil {
		// A source whose configuration is broken is never archived
		// automatically; Validate reports the problem at start.
		return "", false
	}
	return p.Due(rec, now)
}

// Due applies the policy's rules to rec at now.
func (p *SourcePolicy) Due(rec *Record, now time.Time) (ArchiveReason, bool) {
	if p.Event && rec.EventAt != nil && !now.Before(rec.EventAt.Add(p.Grace)) {
		return ReasonEvent, true
	}
	if p.StaleAfter > 0 && !rec.LastUpdatedAt.After(now.Add(-p.StaleAfter)) {
		return ReasonStale, true
	}
	if p.MaxAge > 0 && !rec.CrawledAt.After(now.Add(-p.MaxAge)) {
		return ReasonAge, true
	}
	return "", false
}

// Cutoffs are the thresholds of a policy at a moment: a record is due when
// crawled_at <= CrawledBefore, last_updated_at <= UpdatedBefore or
// event_at <= EventBefore. A zero time disables that rule. Stores select
// due records with them through their indexes.
type Cutoffs struct {
	CrawledBefore time.Time
	UpdatedBefore time.Time
	EventBefore   time.Time
}

// Cutoffs returns the policy's thresholds at now.
func (p *SourcePolicy) Cutoffs(now time.Time) Cutoffs {
	var c Cutoffs
	if p.MaxAge > 0 {
		c.CrawledBefore = now.Add(-p.MaxAge)
	}
	if p.StaleAfter > 0 {
		c.UpdatedBefore = now.Add(-p.StaleAfter)
	}
	if p.Event {
		c.EventBefore = now.Add(-p.Grace)
	}
	return c
}
