package recrawl

import (
	"math"
	"time"
)

// FetchStats is what ingest keeps per record: a few counters updated on
// every delivery, enough to estimate the record's change rate without
// reading its history.
type FetchStats struct {
	// Known is true when the counters have been kept since the record was
	// created. Records older than the counters have Known false; their
	// estimate is the source prior (Estimate.FromPrior, reason
	// source_prior).
	Known bool
	// Refetches counts re-deliveries. Each one closes one observed
	// interval, from the previous last_updated_at to the delivery.
	Refetches int64
	// Changes counts the re-deliveries whose content hash differed from
	// the stored one.
	Changes int64
	// ChangedSeconds is the total length of the intervals that ended in a
	// change.
	ChangedSeconds float64
	// ChangedLogSeconds is the sum of the natural logarithms of the
	// lengths in seconds (at least 1) of the intervals that ended in a
	// change. With ChangedSeconds it tells how spread those intervals
	// are; 0 means the store does not keep it, and the estimator takes
	// the changed intervals at their mean.
	ChangedLogSeconds float64
	// UnchangedSeconds is the total length of the intervals that ended
	// unchanged.
	UnchangedSeconds float64
	// FirstFetch and LastFetch are the record's crawled_at and
	// last_updated_at.
	FirstFetch, LastFetch time.Time
	// LastChange is the record's last_changed_at.
	LastChange time.Time
	// EventAt is the record's event date or deadline, if it has one.
	EventAt *time.Time
}

// Observe returns s updated for a delivery at the given time whose content
// hash did or did not differ from the stored one. It is the rule ingest
// follows (the store keeps the same counters in its own columns): the
// first delivery creates the record; every later one closes the interval
// since last_updated_at, as changed or unchanged. A delivery older than
// last_updated_at (a crawler's clock behind, a replay) closes an empty
// interval: last_updated_at never moves backwards, and a negative length
// would corrupt the sums.
func (s FetchStats) Observe(at time.Time, changed bool) FetchStats {
	if s.FirstFetch.IsZero() && s.LastFetch.IsZero() {
		s.Known = true
		s.FirstFetch, s.LastFetch, s.LastChange = at, at, at
		return s
	}
	d := at.Sub(s.LastFetch).Seconds()
	if d < 0 {
		d = 0
	}
	s.Refetches++
	if changed {
		s.Changes++
		s.ChangedSeconds += d
		s.ChangedLogSeconds += math.Log(math.Max(d, 1))
		s.LastChange = at
	} else {
		s.UnchangedSeconds += d
	}
	if at.After(s.LastFetch) {
		s.LastFetch = at
	}
	return s
}
