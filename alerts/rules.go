package alerts

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

// finding is one subject of a rule evaluated: a round, a source, a field
// of a source, or the whole store.
type finding struct {
	subject   string
	firing    bool
	value     float64
	threshold float64
	message   string
}

// evaluate runs one rule at now.
func (e *Engine) evaluate(ctx context.Context, r crawlkeeper.AlertRule, now time.Time) ([]finding, error) {
	switch r.Kind {
	case crawlkeeper.AlertRoundStalled:
		return e.roundStalled(ctx, r, now)
	case crawlkeeper.AlertIngestStopped:
		return e.ingestStopped(ctx, r, now)
	case crawlkeeper.AlertDateErrors:
		return e.dateErrors(ctx, r)
	case crawlkeeper.AlertFreshness:
		return e.freshness(ctx, r, now)
	case crawlkeeper.AlertFillRate:
		return e.fillRate(ctx, r)
	case crawlkeeper.AlertDeadLetters:
		return e.deadLetters(ctx, r)
	}
	return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "unknown rule kind %q", r.Kind)
}

func (e *Engine) monitor() (crawlkeeper.Monitor, error) {
	if e.Monitor == nil {
		return nil, crawlkeeper.Errorf(crawlkeeper.ENOTSUPPORTED, "no crawl monitor: round and field rules need one (the embedded store's, or --monitor redis://...)")
	}
	return e.Monitor, nil
}

// newestRound returns the most recently created round whose name starts
// with prefix, or "" when there is none.
func newestRound(ctx context.Context, mon crawlkeeper.Monitor, prefix string) (string, error) {
	rounds, err := mon.Rounds(ctx)
	if err != nil {
		return "", err
	}
	var newest *crawlkeeper.RoundSummary
	for i, r := range rounds {
		if !strings.HasPrefix(r.Round, prefix) {
			continue
		}
		if newest == nil || !r.CreatedAt.Before(newest.CreatedAt) {
			newest = &rounds[i]
		}
	}
	if newest == nil {
		return "", nil
	}
	return newest.Round, nil
}

// roundStalled: targets remain and no target was done in the last N
// buckets. Activity is dated by the end of the newest bucket with a done
// target (a target done at 10:01 in a 10-minute bucket counts as 10:10),
// or the end of the round's first bucket when nothing is done yet, so a
// round is never stalled before N whole buckets have passed.
func (e *Engine) roundStalled(ctx context.Context, r crawlkeeper.AlertRule, now time.Time) ([]finding, error) {
	mon, err := e.monitor()
	if err != nil {
		return nil, err
	}
	round := r.Round
	if round == "" {
		if round, err = newestRound(ctx, mon, r.RoundPrefix); err != nil || round == "" {
			return nil, err
		}
	}
	st, err := mon.Status(ctx, round)
	if err != nil {
		if crawlkeeper.ErrorCode(err) == crawlkeeper.ENOTFOUND {
			return nil, nil // not started yet
		}
		return nil, err
	}
	n := r.Buckets
	if n <= 0 {
		n = crawlkeeper.DefaultStallBuckets
	}
	bucket := st.Bucket.D()
	if bucket <= 0 {
		bucket = crawlkeeper.DefaultBucket
	}
	active := crawlkeeper.BucketStart(st.CreatedAt, bucket).Add(bucket)
	for _, b := range st.Buckets {
		if end := b.Start.Add(bucket); b.Done > 0 && end.After(active) {
			active = end
		}
	}
	idle := now.Sub(active)
	f := finding{subject: "round " + round, value: float64(st.Remaining), threshold: float64(n)}
	f.firing = st.Remaining > 0 && idle >= time.Duration(n)*bucket
	f.message = fmt.Sprintf("round %s stalled: no target done for %s (%d buckets of %s) while %d of %d targets remain",
		round, roundDuration(max(idle, 0)), n, crawlkeeper.Duration(bucket), st.Remaining, st.Queued)
	if !f.firing {
		f.message = fmt.Sprintf("round %s: %d of %d targets remain; last progress %s ago", round, st.Remaining, st.Queued, roundDuration(max(idle, 0)))
	}
	return []finding{f}, nil
}

// sources returns the rule's source, or every source the store knows.
func (e *Engine) sources(ctx context.Context, r crawlkeeper.AlertRule) (map[string]*crawlkeeper.SourceStats, error) {
	st, err := e.Store.Stats(ctx)
	if err != nil {
		return nil, err
	}
	if r.Source == "" {
		return st.Sources, nil
	}
	out := map[string]*crawlkeeper.SourceStats{}
	if s, ok := st.Sources[r.Source]; ok {
		out[r.Source] = s
	}
	return out, nil
}

func sortedNames(m map[string]*crawlkeeper.SourceStats) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ingestStopped: a source with records got nothing for the period. The
// newest last_updated_at of the source, active or archived, is its last
// delivery.
func (e *Engine) ingestStopped(ctx context.Context, r crawlkeeper.AlertRule, now time.Time) ([]finding, error) {
	period := r.For.D()
	if period <= 0 {
		period = crawlkeeper.DefaultIngestStoppedFor
	}
	srcs, err := e.sources(ctx, r)
	if err != nil {
		return nil, err
	}
	var out []finding
	for _, name := range sortedNames(srcs) {
		var last time.Time
		for _, archived := range []bool{false, true} {
			page, err := e.Store.List(ctx, crawlkeeper.RecordQuery{Source: name, Archived: archived, Order: crawlkeeper.OrderNewest, Limit: 1})
			if err != nil {
				return nil, err
			}
			if len(page.Records) > 0 && page.Records[0].LastUpdatedAt.After(last) {
				last = page.Records[0].LastUpdatedAt
			}
		}
		if last.IsZero() {
			continue
		}
		quiet := now.Sub(last)
		f := finding{subject: "source " + name, value: quiet.Seconds(), threshold: period.Seconds(), firing: quiet >= period}
		f.message = fmt.Sprintf("source %s: nothing delivered for %s (since %s), the limit is %s", name, roundDuration(quiet), last.UTC().Format(time.RFC3339), crawlkeeper.Duration(period))
		out = append(out, f)
	}
	return out, nil
}

// dateErrors: the share of a source's active records with unreadable
// dates.
func (e *Engine) dateErrors(ctx context.Context, r crawlkeeper.AlertRule) ([]finding, error) {
	limit := r.Threshold
	if limit <= 0 {
		limit = crawlkeeper.DefaultDateErrorThreshold
	}
	srcs, err := e.sources(ctx, r)
	if err != nil {
		return nil, err
	}
	var out []finding
	for _, name := range sortedNames(srcs) {
		s := srcs[name]
		if s.Active == 0 {
			continue
		}
		share := float64(s.ActiveDateErrors) / float64(s.Active)
		out = append(out, finding{subject: "source " + name, value: share, threshold: limit, firing: share > limit,
			message: fmt.Sprintf("source %s: %s of active records have unreadable dates (%d of %d), the limit is %s",
				name, percent(share), s.ActiveDateErrors, s.Active, percent(limit))})
	}
	return out, nil
}

// freshness: the oldest processed_at is older than the period, so a
// rescan pass did not reach every record in time.
func (e *Engine) freshness(ctx context.Context, r crawlkeeper.AlertRule, now time.Time) ([]finding, error) {
	period := r.For.D()
	if period <= 0 {
		period = e.Period
	}
	if period <= 0 {
		period = crawlkeeper.DefaultPipelinePeriod
	}
	fr, err := pipeline.Freshness(ctx, e.Store, e.Chain, now.Add(-period))
	if err != nil {
		return nil, err
	}
	f := finding{subject: "pipeline", threshold: period.Seconds()}
	if fr.OldestProcessedAt == nil {
		f.message = "no record has been processed yet"
		return []finding{f}, nil
	}
	age := now.Sub(*fr.OldestProcessedAt)
	f.value, f.firing = age.Seconds(), age > period
	f.message = fmt.Sprintf("the oldest processed record was processed %s ago, past the period of %s (%d records due)", roundDuration(age), crawlkeeper.Duration(period), fr.Due)
	if !f.firing {
		f.message = fmt.Sprintf("the oldest processed record was processed %s ago, within the period of %s", roundDuration(age), crawlkeeper.Duration(period))
	}
	return []finding{f}, nil
}

// fillRate compares a watched field's fill rate in a round with the
// round before it that has data for the field.
func (e *Engine) fillRate(ctx context.Context, r crawlkeeper.AlertRule) ([]finding, error) {
	mon, err := e.monitor()
	if err != nil {
		return nil, err
	}
	drop := r.Threshold
	if drop <= 0 {
		drop = crawlkeeper.DefaultFillRateDrop
	}
	rounds, err := mon.Rounds(ctx)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(rounds, func(i, j int) bool { return rounds[i].CreatedAt.Before(rounds[j].CreatedAt) })
	order := make([]string, len(rounds))
	for i, x := range rounds {
		order[i] = x.Round
	}
	reports, err := mon.Fields(ctx, r.Source)
	if err != nil {
		return nil, err
	}
	var out []finding
	for _, rep := range reports {
		if rep.Field != r.Field {
			continue
		}
		// The rounds with data, oldest first; the newest (or r.Round) is
		// compared with the one before it.
		var have []string
		for _, name := range order {
			if _, ok := rep.FillRateByRound[name]; ok {
				have = append(have, name)
			}
		}
		cur := len(have) - 1
		if r.Round != "" {
			cur = slices.Index(have, r.Round)
		}
		if cur < 1 {
			continue
		}
		now, prev := have[cur], have[cur-1]
		rate, before := rep.FillRateByRound[now], rep.FillRateByRound[prev]
		f := finding{subject: fmt.Sprintf("source %s field %s", rep.Source, rep.Field), value: rate, threshold: before * (1 - drop)}
		f.firing = rate < f.threshold
		f.message = fmt.Sprintf("source %s, field %s: fill rate %s in round %s against %s in round %s (alert below %s)",
			rep.Source, rep.Field, percent(rate), now, percent(before), prev, percent(f.threshold))
		out = append(out, f)
	}
	return out, nil
}

// deadLetters: more dead letters than the threshold.
func (e *Engine) deadLetters(ctx context.Context, r crawlkeeper.AlertRule) ([]finding, error) {
	dls, err := e.Store.DeadLetters(ctx, 1<<30)
	if err != nil {
		return nil, err
	}
	n := float64(len(dls))
	f := finding{subject: "pipeline", value: n, threshold: r.Threshold, firing: n > r.Threshold}
	f.message = fmt.Sprintf("%d records in the dead letters (the limit is %g): see `crawlkeeper deadletters`", len(dls), r.Threshold)
	return []finding{f}, nil
}

func percent(x float64) string { return fmt.Sprintf("%.1f%%", x*100) }

// roundDuration prints a duration to the second, in days when long.
func roundDuration(d time.Duration) string {
	return crawlkeeper.Duration(d.Round(time.Second)).String()
}
