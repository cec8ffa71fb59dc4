package bench

import (
	"context"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// dateResults are the names runDates produces.
var dateResults = []string{"date_parse_iso", "date_parse_mixed", "date_parse_fallback"}

// DateBaselines are the parsers and strings the date results compare
// Options.Dates with. The dates package provides them (it owns the date
// library); a zero field skips the result that needs it.
type DateBaselines struct {
	// Library is go-dateparser alone: the baseline of date_parse_mixed.
	Library crawlkeeper.DateParser
	// Uncached reads like Options.Dates but asks the library on every
	// call: the baseline of date_parse_fallback.
	Uncached crawlkeeper.DateParser
	// NewCached returns a parser like Options.Dates with an empty cache,
	// so date_parse_fallback measures the first reads too.
	NewCached func() crawlkeeper.DateParser
	// FallbackCorpus returns n strings only the library reads, with the
	// repeats crawls have.
	FallbackCorpus func(n int, seed int64) []string
}

// runDates measures the date parser on one goroutine (so per core):
//   - date_parse_iso: RFC 3339 strings against time.Parse on the same
//     strings;
//   - date_parse_mixed: a realistic multilingual mix with the repeats
//     crawls have, against go-dateparser alone on the same strings (a
//     prefix of them: the library reads a few hundred a second);
//   - date_parse_fallback: text only the library reads, through the
//     cache (a fresh one, so first reads count) against the same parser
//     asking the library every time.
func runDates(ctx context.Context, env *Env) ([]Result, error) {
	opts := &env.Options
	const n = 200_000
	iso := make([]string, n)
	for i := range iso {
		iso[i] = Now.Add(time.Duration(i) * 37 * time.Second).Format(time.RFC3339)
	}
	o := crawlkeeper.DateOptions{Location: time.UTC, Now: Now}
	var t timer
	for round := 0; round < 3; round++ {
		opts.progress("date_parse_iso", round, 3)
		if err := t.timeA(func() error {
			for _, s := range iso {
				if _, err := opts.Dates.ParseDate(s, o); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
		t.timeB(func() error {
			for _, s := range iso {
				if _, err := time.Parse(time.RFC3339, s); err != nil {
					return err
				}
			}
			return nil
		})
	}
	results := []Result{ratioResult("date_parse_iso", "parses/s", rate(3*n, t.a), rate(3*n, t.b), 3*n, 0.5)}
	if opts.MixedCorpus == nil {
		return results, nil
	}
	base := opts.DateBaselines
	mixed := opts.MixedCorpus(n, 7)
	if base.NewCached != nil {
		// The parser's tables and the library's expressions are built on
		// first use, once a process (cli_start_ms measures what that
		// spares every command). Build them here, through a parser of
		// their own so the measured cache starts empty, rather than
		// charge the one-off build to the first parses timed.
		warm := base.NewCached()
		warmup := opts.MixedCorpus(20_000, 3)
		if base.FallbackCorpus != nil {
			warmup = append(warmup, base.FallbackCorpus(1000, 3)...)
		}
		for _, s := range warmup {
			warm.ParseDate(s, o)
		}
	}
	opts.progress("date_parse_mixed", 0, 2)
	start := time.Now()
	for _, s := range mixed {
		opts.Dates.ParseDate(s, o) // errors are part of the mix (junk strings)
	}
	value := rate(n, time.Since(start))
	r := Result{Name: "date_parse_mixed", Unit: "parses/s", Value: value, N: n, Target: "value >= 100000 (one core), value/baseline >= 100"}
	if base.Library != nil {
		opts.progress("date_parse_mixed", 1, 2)
		k, el := timeBounded(ctx, base.Library, mixed, o, 5*time.Second)
		r.Baseline = rate(k, el)
		if r.Baseline > 0 {
			r.Ratio = r.Value / r.Baseline
		}
	}
	r.Met = r.Value >= 100_000 && r.Ratio >= 100
	results = append(results, r)

	if base.FallbackCorpus == nil || base.Uncached == nil || base.NewCached == nil {
		return results, nil
	}
	const nf = 20_000
	tail := base.FallbackCorpus(nf, 11)
	opts.progress("date_parse_fallback", 0, 2)
	cached := base.NewCached()
	start = time.Now()
	for _, s := range tail {
		cached.ParseDate(s, o)
	}
	fr := Result{Name: "date_parse_fallback", Unit: "parses/s", Value: rate(nf, time.Since(start)), N: nf,
		Target: "value (cached) / baseline (uncached) >= 10"}
	opts.progress("date_parse_fallback", 1, 2)
	k, el := timeBounded(ctx, base.Uncached, tail, o, 5*time.Second)
	fr.Baseline = rate(k, el)
	if fr.Baseline > 0 {
		fr.Ratio = fr.Value / fr.Baseline
	}
	fr.Met = fr.Ratio >= 10
	return append(results, fr), nil
}

// timeBounded reads strings from the start of in with p until in is done
// or limit has passed, and returns how many it read and how long it took.
func timeBounded(ctx context.Context, p crawlkeeper.DateParser, in []string, o crawlkeeper.DateOptions, limit time.Duration) (int, time.Duration) {
	start := time.Now()
	k := 0
	for _, s := range in {
		p.ParseDate(s, o)
		k++
		if k%16 == 0 && (time.Since(start) > limit || ctx.Err() != nil) {
			break
		}
	}
	return k, time.Since(start)
}
