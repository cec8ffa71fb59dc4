package crawlkeeper

import (
	"context"
	"sort"
	"time"
)

// Monitor defaults. MonitorConfig documents which field falls back to which.
const (
	DefaultBucket                = 10 * time.Minute
	DefaultBucketRetention       = 7 * 24 * time.Hour
	DefaultClosedBucketRetention = time.Hour
	DefaultRareBelow             = 0.2
	// DefaultRemainingLimit is the page size of Remaining and Diff when
	// none is given; MaxRemainingLimit bounds it.
	DefaultRemainingLimit = 100
	MaxRemainingLimit     = 100000
)

// Monitor tracks crawl rounds: an append-only dictionary of targets (name
// → dense integer, never reused), per-round queued, done and failed sets,
// per-bucket done sets that a merger folds into the round's done set, and
// rare-field samples. Backends (roaringmon, redis) run the conformance
// suite in package monitortest.
//
// Sets are of dictionary ids, so "dictionary order" is the order in which
// targets were first seen. Every method is safe for concurrent use, also
// by several processes sharing the backend. Errors are *Error values:
// EINVALID for bad input, ENOTFOUND for an unknown round or target,
// EUNAVAILABLE when the backend cannot be reached.
type Monitor interface {
	// Queue adds targets to the round's queued set, adding unknown names to
	// the dictionary, and creates the round if needed. A round's bucket
	// length is fixed by its first Queue or Mark; asking for another one
	// later is EINVALID once the round has bucket data.
	Queue(ctx context.Context, q QueueRequest) (*QueueResult, error)
	// Mark records marks (queued, done or failed) and returns how many it
	// recorded. When it returns nil every mark is durable as the backend
	// defines it (see the backend's package doc). Done marks land in the
	// bucket of their time; Status counts them at once, before any merge.
	Mark(ctx context.Context, marks []Mark) (int, error)
	// Status reports a round's progress and throughput, or ENOTFOUND.
	Status(ctx context.Context, round string) (*RoundStatus, error)
	// Remaining returns up to limit names of targets queued in the round
	// and neither done nor failed, in dictionary order, starting after the
	// target named after (from the start when empty). An unknown after is
	// ENOTFOUND.
	Remaining(ctx context.Context, round, after string, limit int) ([]string, error)
	// Failed returns a page of the targets that failed in a round and
	// were not done in it afterwards, with their latest reasons, in
	// dictionary order: all of them, those that failed in another round
	// too (q.Also), or those done in a later round (q.DoneLater). An
	// unknown round or after is ENOTFOUND.
	Failed(ctx context.Context, q FailedQuery) (*FailedPage, error)
	// Diff compares the done sets of two rounds: counts of targets done in
	// one but not the other, and up to limit names of each, in dictionary
	// order after the target named after.
	Diff(ctx context.Context, a, b, after string, limit int) (*RoundDiff, error)
	// Rounds lists every round with its counts, oldest first.
	Rounds(ctx context.Context) ([]RoundSummary, error)
	// Target returns one target's state in every round, or ENOTFOUND.
	Target(ctx context.Context, name string) (*TargetStatus, error)
	// MergeBuckets is one step of the background merger: it folds every
	// finished bucket (now ≥ its end) into its round's done set, keeping the
	// bucket's count, and drops the sets of merged buckets whose end is
	// older than the retention: ClosedBucketRetention in a closed round
	// (see RoundClosed), BucketRetention in the others. It is idempotent.
	MergeBuckets(ctx context.Context, now time.Time) (*MergeResult, error)
	// ObserveFields records which fields committed items had and whether
	// they were filled, for rare-field tracking (see FieldReport).
	ObserveFields(ctx context.Context, obs []FieldObservation) error
	// Fields reports the watched fields of one source, or of every source
	// when source is empty: configured watch fields and fields whose fill
	// rate is under MonitorOptions.RareBelow, sorted by source and field.
	Fields(ctx context.Context, source string) ([]FieldReport, error)
	// Close releases the monitor's resources. It does not close a store the
	// monitor persists into.
	Close() error
}

// MonitorOptions configure a monitor backend; the zero value means all
// defaults (see MonitorConfig).
type MonitorOptions struct {
	// Bucket is the bucket length of rounds created without one.
	Bucket time.Duration
	// BucketRetention is how long after its end a merged bucket's set is
	// kept while its round is open.
	BucketRetention time.Duration
	// ClosedBucketRetention is how long after its end a merged bucket's
	// set is kept once its round is closed (see RoundClosed): bucket sets
	// answer which bucket a target was done in, a question for the round
	// in progress; their counts stay for the throughput chart.
	ClosedBucketRetention time.Duration
	// Samples is how many sample record ids a field collects.
	Samples int
	// RareBelow is the fill rate under which a field is reported as rare.
	RareBelow float64
	// WatchFields returns the configured watch fields of a source.
	WatchFields func(source string) []string
}

// WithDefaults returns o with every unset field at its default.
func (o MonitorOptions) WithDefaults() MonitorOptions {
	if o.Bucket <= 0 {
		o.Bucket = DefaultBucket
	}
	if o.BucketRetention <= 0 {
		o.BucketRetention = DefaultBucketRetention
	}
	if o.ClosedBucketRetention <= 0 {
		o.ClosedBucketRetention = DefaultClosedBucketRetention
	}
	o.ClosedBucketRetention = min(o.ClosedBucketRetention, o.BucketRetention)
	if o.Samples <= 0 {
		o.Samples = DefaultSamples
	}
	if o.RareBelow <= 0 {
		o.RareBelow = DefaultRareBelow
	}
	return o
}

// MonitorOptions resolves the configuration's monitor section.
func (c *Config) MonitorOptions() MonitorOptions {
	if c == nil {
		return MonitorOptions{}.WithDefaults()
	}
	m := c.Monitor
	return MonitorOptions{
		Bucket:                m.Bucket.D(),
		BucketRetention:       m.BucketRetention.D(),
		ClosedBucketRetention: m.BucketRetentionClosed.D(),
		Samples:               m.Samples,
		RareBelow:             m.RareBelow,
		WatchFields: func(source string) []string {
			if p, err := c.Policy(source); err == nil {
				return p.WatchFields
			}
			return nil
		},
	}.WithDefaults()
}

// QueueRequest schedules targets in a round.
type QueueRequest struct {
	Round   string
	Targets []string
	// Bucket is the round's bucket length; zero keeps the round's, or the
	// default for a new round.
	Bucket time.Duration
	// At is when the round was queued; it is the creation time of a new
	// round.
	At time.Time
}

// QueueResult reports a Queue call.
type QueueResult struct {
	Round string `json:"round"`
	// Queued is the number of distinct targets in the request.
	Queued int `json:"queued"`
	// NewTargets is how many of them were new to the dictionary.
	NewTargets int `json:"new_targets"`
	// Total is the size of the round's queued set afterwards.
	Total int64 `json:"total"`
}

// RoundStatus is a round's progress. Done and Failed count every target
// marked so (queued or not); a target done after it failed counts as done
// only. Remaining counts queued targets neither done nor failed, so when
// every marked target was queued, Remaining = Queued − Done − Failed.
type RoundStatus struct {
	Round     string `json:"round"`
	Queued    int64  `json:"queued"`
	Done      int64  `json:"done"`
	Failed    int64  `json:"failed"`
	Remaining int64  `json:"remaining"`
	// Bytes is what the round's queued, done and failed sets occupy in
	// the backend; BucketBytes is what its kept bucket sets occupy.
	Bytes       int64         `json:"bytes"`
	BucketBytes int64         `json:"bucket_bytes"`
	Bucket      Duration      `json:"bucket"`
	CreatedAt   time.Time     `json:"created_at"`
	Buckets     []BucketCount `json:"buckets"`
}

// RoundClosed says whether a round is over, for dropping its bucket sets
// early: nothing queued in it remains (every queued target is done or
// failed), or a round created after it exists (the crawler moved on).
func RoundClosed(remaining int64, later bool) bool { return remaining == 0 || later }

// FailedQuery selects the failed targets of a round.
type FailedQuery struct {
	Round string
	// Also, when set, keeps the targets that failed in that round too
	// (and were not done in it).
	Also string
	// DoneLater keeps the targets done in a round created after Round:
	// failures that a later round recovered.
	DoneLater bool
	// After and Limit page as in Remaining.
	After string
	Limit int
}

// FailedPage is one page of failed targets.
type FailedPage struct {
	Round     string `json:"round"`
	Also      string `json:"also,omitempty"`
	DoneLater bool   `json:"done_later,omitempty"`
	// Count is how many targets match in all.
	Count   int64          `json:"count"`
	Targets []FailedTarget `json:"targets"`
	// Next is the After of the next page; empty on the last one.
	Next string `json:"next"`
}

// FailedTarget is one failed target with its latest reasons.
type FailedTarget struct {
	Target string `json:"target"`
	// Reason is the latest reason it failed with in the round; empty
	// when the crawler sent none.
	Reason string `json:"reason,omitempty"`
	// AlsoReason is the same in the round of FailedQuery.Also.
	AlsoReason string `json:"also_reason,omitempty"`
	// DoneIn names the first later round that did it, with DoneLater.
	DoneIn string `json:"done_in,omitempty"`
}

// BucketCount is the throughput of one bucket: targets marked done in it.
type BucketCount struct {
	Start time.Time `json:"start"`
	Done  int64     `json:"done"`
	// Merged is set once the bucket was folded into the round's done set;
	// Dropped once its set was deleted and only the count remains.
	Merged  bool `json:"merged"`
	Dropped bool `json:"dropped,omitempty"`
}

// RoundSummary is one line of the round list.
type RoundSummary struct {
	Round     string    `json:"round"`
	CreatedAt time.Time `json:"created_at"`
	Bucket    Duration  `json:"bucket"`
	Queued    int64     `json:"queued"`
	Done      int64     `json:"done"`
	Failed    int64     `json:"failed"`
	Remaining int64     `json:"remaining"`
}

// RoundDiff compares the done sets of two rounds.
type RoundDiff struct {
	Round string `json:"round"`
	Vs    string `json:"vs"`
	// OnlyRound holds targets done in Round but not in Vs; OnlyVs the
	// reverse.
	OnlyRound DiffSide `json:"only_round"`
	OnlyVs    DiffSide `json:"only_vs"`
}

// DiffSide is one direction of a diff: the full count and one page of
// names.
type DiffSide struct {
	Count int64    `json:"count"`
	Names []string `json:"names"`
}

// TargetStatus is one target's state in every round that knows it.
type TargetStatus struct {
	Target string        `json:"target"`
	ID     uint32        `json:"id"`
	Rounds []TargetRound `json:"rounds"`
}

// TargetRound is a target's state in one round. DoneAt is the start of the
// bucket it was marked done in, while that bucket's set is kept.
type TargetRound struct {
	Round  string     `json:"round"`
	Queued bool       `json:"queued"`
	Done   bool       `json:"done"`
	Failed bool       `json:"failed"`
	DoneAt *time.Time `json:"done_at,omitempty"`
	// Reason is the latest failure reason in the round, while the target
	// is failed there.
	Reason string `json:"reason,omitempty"`
}

// MergeResult reports one merger step.
type MergeResult struct {
	// Merged counts buckets folded into their round's done set.
	Merged int `json:"merged"`
	// Dropped counts bucket sets deleted past the retention.
	Dropped int `json:"dropped"`
}

// FieldObservation is one committed item's fields, for rare-field
// tracking.
type FieldObservation struct {
	Source   string
	Round    string
	Target   string
	RecordID int64
	Fields   []FieldFill
}

// FieldReport is what the monitor knows of one field of one source. While
// fewer than MonitorOptions.Samples samples exist, every item where the
// field has a value adds its target to the field's target set and its
// record id to the samples; at the limit the set is deleted (Targets keeps
// its last size) and Enough is set.
type FieldReport struct {
	Source string `json:"source"`
	Field  string `json:"field"`
	// Watch says why the field is reported: "config" or "rare".
	Watch string `json:"watch"`
	// Present counts items that had the field; Filled those where it had
	// a value.
	Present int64   `json:"present"`
	Filled  int64   `json:"filled"`
	Targets int64   `json:"targets"`
	Samples []int64 `json:"samples"`
	Enough  bool    `json:"enough"`
	// FillRate is Filled/Present; FillRateByRound is the same per round,
	// for items that carried a round.
	FillRate        float64            `json:"fill_rate"`
	FillRateByRound map[string]float64 `json:"fill_rate_by_round"`
}

// FieldStats are the raw counters a backend keeps for one field; the
// domain turns them into reports with FieldReports.
type FieldStats struct {
	Source  string
	Field   string
	Present int64
	Filled  int64
	Targets int64
	Samples []int64
	Enough  bool
	// ByRound holds present and filled counts per round.
	ByRound map[string][2]int64
}

// FieldReports selects the fields worth reporting from stats (configured
// watch fields and rare ones) and computes their fill rates. Configured
// fields never seen are reported with zero counts.
func FieldReports(stats []FieldStats, source string, opts MonitorOptions) []FieldReport {
	opts = opts.WithDefaults()
	type sf struct{ s, f string }
	have := map[sf]bool{}
	out := []FieldReport{}
	watched := func(src, field string) bool {
		if opts.WatchFields == nil {
			return false
		}
		for _, w := range opts.WatchFields(src) {
			if w == field {
				return true
			}
		}
		return false
	}
	sources := map[string]bool{}
	if source != "" {
		sources[source] = true
	}
	for _, st := range stats {
		if source != "" && st.Source != source {
			continue
		}
		sources[st.Source] = true
		have[sf{st.Source, st.Field}] = true
		r := FieldReport{Source: st.Source, Field: st.Field, Present: st.Present, Filled: st.Filled,
			Targets: st.Targets, Samples: append([]int64{}, st.Samples...), Enough: st.Enough,
			FillRateByRound: map[string]float64{}}
		if st.Present > 0 {
			r.FillRate = float64(st.Filled) / float64(st.Present)
		}
		switch {
		case watched(st.Source, st.Field):
			r.Watch = "config"
		case st.Present > 0 && r.FillRate < opts.RareBelow:
			r.Watch = "rare"
		default:
			continue
		}
		for round, c := range st.ByRound {
			if c[0] > 0 {
				r.FillRateByRound[round] = float64(c[1]) / float64(c[0])
			}
		}
		out = append(out, r)
	}
	if opts.WatchFields != nil {
		for src := range sources {
			for _, f := range opts.WatchFields(src) {
				if !have[sf{src, f}] {
					out = append(out, FieldReport{Source: src, Field: f, Watch: "config", Samples: []int64{}, FillRateByRound: map[string]float64{}})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Source != out[j].Source {
			return out[i].Source < out[j].Source
		}
		return out[i].Field < out[j].Field
	})
	return out
}

// BucketStart returns the start of the bucket of length d that holds t:
// buckets are aligned on the Unix epoch, so every process agrees on them.
func BucketStart(t time.Time, d time.Duration) time.Time {
	sec := int64(d / time.Second)
	if sec <= 0 {
		sec = 1
	}
	u := t.Unix()
	s := u - ((u%sec)+sec)%sec
	return time.Unix(s, 0).UTC()
}

// ValidateBucket checks a round's bucket length: whole seconds, from one
// second to one day.
func ValidateBucket(d time.Duration) error {
	if d < time.Second || d > 24*time.Hour || d%time.Second != 0 {
		return Errorf(EINVALID, "bucket length %s: use whole seconds from 1s to 24h, such as 10m or 30m", d)
	}
	return nil
}

// ValidateTarget checks a target name: 1 to 1024 bytes without control
// characters (names are printed one per line).
func ValidateTarget(s string) error {
	if s == "" || len(s) > 1024 {
		return Errorf(EINVALID, "target %q: a target name is 1 to 1024 bytes", truncateText(s, 64))
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return Errorf(EINVALID, "target %q: control characters (tabs, newlines) are not allowed", truncateText(s, 64))
		}
	}
	return nil
}

// ValidateMarks checks every mark: a valid round and target, a known kind
// and a time.
func ValidateMarks(marks []Mark) error {
	for i, m := range marks {
		if err := ValidateRound(m.Round); err != nil {
			return Errorf(EINVALID, "mark %d: %s", i+1, ErrorMessage(err))
		}
		if err := ValidateTarget(m.Target); err != nil {
			return Errorf(EINVALID, "mark %d: %s", i+1, ErrorMessage(err))
		}
		switch m.Kind {
		case MarkQueued, MarkDone, MarkFailed:
		default:
			return Errorf(EINVALID, "mark %d: kind %q: use queued, done or failed", i+1, m.Kind)
		}
		if m.At.IsZero() {
			return Errorf(EINVALID, "mark %d: no time given", i+1)
		}
		if m.Reason != "" && m.Kind != MarkFailed {
			return Errorf(EINVALID, "mark %d: a reason goes with a failed mark only, not %s", i+1, m.Kind)
		}
	}
	return nil
}

// ValidateFailedQuery checks a query of Failed and applies the page
// limit.
func ValidateFailedQuery(q FailedQuery) (FailedQuery, error) {
	if err := ValidateRound(q.Round); err != nil {
		return q, err
	}
	if q.Also != "" {
		if err := ValidateRound(q.Also); err != nil {
			return q, err
		}
	}
	q.Limit = PageLimit(q.Limit)
	return q, nil
}

// PageLimit applies the default and the maximum to a page size.
func PageLimit(limit int) int {
	if limit <= 0 {
		return DefaultRemainingLimit
	}
	return min(limit, MaxRemainingLimit)
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// FieldObserver returns an AfterCommit hook that feeds every committed
// item's fields to mon.ObserveFields. A failure does not undo the
// committed batch; it is handed to onErr (which may be nil).
func FieldObserver(mon Monitor, onErr func(error)) AfterCommit {
	return func(ctx context.Context, items []*Prepared, res *IngestResult) {
		obs := make([]FieldObservation, 0, len(items))
		for i, it := range items {
			if it == nil || len(it.Fields) == 0 {
				continue
			}
			var id int64
			if i < len(res.IDs) {
				id = res.IDs[i]
			}
			obs = append(obs, FieldObservation{Source: it.Source, Round: it.Round, Target: it.Target, RecordID: id, Fields: it.Fields})
		}
		if len(obs) == 0 {
			return
		}
		if err := mon.ObserveFields(ctx, obs); err != nil && onErr != nil {
			onErr(err)
		}
	}
}

// RunMerger calls mon.MergeBuckets every interval until ctx ends; serve
// runs it in the background. Failures go to onErr (which may be nil) and
// the loop goes on.
func RunMerger(ctx context.Context, mon Monitor, every time.Duration, now func() time.Time, onErr func(error)) {
	if every <= 0 {
		every = time.Minute
	}
	if now == nil {
		now = time.Now
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := mon.MergeBuckets(ctx, now()); err != nil && onErr != nil && ctx.Err() == nil {
			onErr(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
