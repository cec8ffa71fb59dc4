package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// Search measurements:
//
//   - search_p50: the median latency of realistic queries (one word, two
//     words, a phrase, one word in one source) through crawlkeeper.Search
//     (the store's Search plus snippets), over Scale active records whose
//     archive holds ten times as many, against the same query written by
//     hand against the engine's full-text index on the same store
//     (Raw.Search), alternating query by query. Target: baseline/value
//     >= 0.8, and at most 50 ms on the embedded store.
//   - search_common_ms: the median latency of one-word searches for the
//     corpus's four commonest words (each found in most active
//     documents), first page by relevance, on search_p50's store,
//     against the same raw query. Target: under 200 ms.
//   - ingest_new_search: ingest of new items with search indexing on,
//     against the same ingest with the sources' search turned off, in
//     interleaved chunks. Target: value/baseline >= 0.75.

// RawSearchQuery is one search_p50 query: folded words that must all
// appear (next to each other when Phrase), optionally in one source.
type RawSearchQuery struct {
	Words  []string
	Phrase bool
	Source string
	Limit  int
}

// Search is the measurement of search_p50 and ingest_new_search.
var Search = Measurement{Names: []string{"search_p50", "search_common_ms", "ingest_new_search"}, Run: runSearch}

// vocabulary is the pseudo-words of the search corpus, most frequent
// first: syllables in a fixed order, so every word is distinct, looks
// like a word (three to eight letters), and no word is a prefix of
// another of the same length. It is built on first use, not in package
// init, which every crawlkeeper command would pay for.
var vocabulary = sync.OnceValue(func() []string {
	cons := "bdfgklmnprstvz"
	vows := "aeiou"
	out := make([]string, 0, 50_000)
	seen := map[string]bool{}
	for n := 0; len(out) < cap(out); n++ {
		var b strings.Builder
		x := n
		for {
			b.WriteByte(cons[x%len(cons)])
			x /= len(cons)
			b.WriteByte(vows[x%len(vows)])
			x /= len(vows)
			if x == 0 {
				break
			}
			x--
		}
		w := b.String()
		if len(w) < 3 {
			w += "n"
		}
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
})

// zipf draws word ranks with the skew of natural text.
func zipf(r *rand.Rand) *rand.Zipf { return rand.NewZipf(r, 1.07, 2, uint64(len(vocabulary())-1)) }

// SearchItem returns the i-th item of the search corpus: a title of 4 to
// 8 words and a body of 40 to 80, drawn from a Zipf distribution over
// 50,000 words, in one of five sources.
func SearchItem(i int) map[string]any {
	r := rand.New(rand.NewPCG(uint64(i), 7))
	z := zipf(r)
	vocab := vocabulary()
	words := func(n int) string {
		ws := make([]string, n)
		for k := range ws {
			ws[k] = vocab[z.Uint64()]
		}
		return strings.Join(ws, " ")
	}
	src := sources[i%len(sources)]
	return map[string]any{
		"_source": src,
		"title":   fmt.Sprintf("%s %d", words(4+r.IntN(5)), i),
		"url":     fmt.Sprintf("https://%s/s/%d", src, i),
		"body":    words(40 + r.IntN(41)),
	}
}

// searchQueries returns n queries of the four kinds in turn, with words
// of mid frequency (ranks 50 to 5,000, log-uniform): what people search
// for is rarely the commonest word or a word seen once.
func searchQueries(n int, docs int) []RawSearchQuery {
	r := rand.New(rand.NewPCG(99, 1))
	word := func() string {
		rank := int(50 * math.Pow(100, r.Float64()))
		vocab := vocabulary()
		return vocab[min(rank, len(vocab)-1)]
	}
	out := make([]RawSearchQuery, n)
	for i := range out {
		q := RawSearchQuery{Limit: crawlkeeper.DefaultSearchLimit}
		switch i % 4 {
		case 0:
			q.Words = []string{word()}
		case 1:
			q.Words = []string{word(), word()}
		case 2:
			// A phrase as it appears in a document's body.
			body := strings.Fields(SearchItem(r.IntN(docs))["body"].(string))
			k := r.IntN(len(body) - 1)
			q.Words, q.Phrase = body[k:k+2], true
		case 3:
			q.Words = []string{word()}
			q.Source = sources[r.IntN(len(sources))]
		}
		out[i] = q
	}
	return out
}

// text renders q in crawlkeeper's query language.
func (q RawSearchQuery) text() string {
	s := strings.Join(q.Words, " ")
	if q.Phrase {
		s = `"` + s + `"`
	}
	return s
}

// loadSearchCorpus writes active records [0, active) and archived ones
// [active, active+archived) of the search corpus straight into st,
// preparing them in parallel while the previous chunk is written.
func loadSearchCorpus(ctx context.Context, opts *Options, raw Raw, active, archived int) error {
	total := active + archived
	type part struct {
		from int
		recs []*crawlkeeper.Record
		err  error
	}
	parts := make(chan part, 2)
	go func() {
		defer close(parts)
		prep := &crawlkeeper.Preparer{Config: &crawlkeeper.Config{}}
		for from := 0; from < total; from += chunk {
			to := min(from+chunk, total)
			recs := make([]*crawlkeeper.Record, to-from)
			var wg sync.WaitGroup
			var mu sync.Mutex
			var firstErr error
			workers := runtime.GOMAXPROCS(0)
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					for i := from + w; i < to; i += workers {
						b, _ := json.Marshal(SearchItem(i))
						p, err := prep.Prepare(b, i+1, crawlkeeper.Meta{}, Now)
						if err != nil {
							mu.Lock()
							firstErr = err
							mu.Unlock()
							return
						}
						rec := crawlkeeper.NewRecord(p, Now)
						rec.ID = int64(i + 1)
						recs[i-from] = rec
					}
				}(w)
			}
			wg.Wait()
			select {
			case parts <- part{from: from, recs: recs, err: firstErr}:
			case <-ctx.Done():
				return
			}
		}
	}()
	for p := range parts {
		if p.err != nil {
			return p.err
		}
		opts.progress("search (load)", p.from, total)
		for i := 0; i < len(p.recs); i += crawlkeeper.DefaultBatchSize {
			j := min(i+crawlkeeper.DefaultBatchSize, len(p.recs))
			var err error
			if p.from+i < active {
				err = raw.Insert(ctx, p.recs[i:j])
			} else {
				err = raw.ArchiveInsert(ctx, p.recs[i:j], Now)
			}
			if err != nil {
				return err
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := raw.SyncIDs(ctx); err != nil {
		return err
	}
	return raw.Analyze(ctx)
}

func runSearch(ctx context.Context, env *Env) ([]Result, error) {
	opts := &env.Options
	var results []Result
	if opts.want("search_p50", "search_common_ms") {
		rs, err := runSearchP50(ctx, opts)
		if crawlkeeper.ErrorCode(err) == crawlkeeper.ENOTSUPPORTED {
			// A server without a full-text index (FerretDB) has nothing to
			// measure against: the row says so instead of failing the run.
			rs, err = []Result{{Name: "search_p50", Unit: "ms (p50)", Target: "not measured: " + crawlkeeper.ErrorMessage(err), Met: true}}, nil
		}
		if err != nil {
			return nil, err
		}
		results = append(results, rs...)
	}
	if opts.want("ingest_new_search") {
		r, err := runIngestSearch(ctx, opts)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	return results, nil
}

func runSearchP50(ctx context.Context, opts *Options) ([]Result, error) {
	active := opts.Scale
	st, closeSt, err := opts.Open(ctx, "search")
	if err != nil {
		return nil, err
	}
	defer closeSt()
	raw, err := opts.raw(st)
	if err != nil {
		return nil, err
	}
	if r, ok := st.(crawlkeeper.SearchIndexReporter); ok && r.SearchWithoutIndex() != "" {
		return nil, crawlkeeper.Errorf(crawlkeeper.ENOTSUPPORTED, "search_p50: %s", r.SearchWithoutIndex())
	}
	if err := loadSearchCorpus(ctx, opts, raw, active, 10*active); err != nil {
		return nil, fmt.Errorf("search_p50 (load): %w", err)
	}
	var results []Result
	if opts.want("search_p50") {
		r, err := searchP50(ctx, opts, st, raw)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	if opts.want("search_common_ms") {
		r, err := searchCommon(ctx, opts, st, raw)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	return results, nil
}

// searchP50 times search_p50's queries on the loaded corpus.
func searchP50(ctx context.Context, opts *Options, st crawlkeeper.Store, raw Raw) (Result, error) {
	active := opts.Scale
	cfg := &crawlkeeper.Config{}
	queries := searchQueries(400, active)
	var value, baseline []time.Duration
	// A first pass warms the caches of both paths alike; the second is
	// measured, alternating crawlkeeper and the raw query per query.
	for pass := 0; pass < 2; pass++ {
		for i, q := range queries {
			opts.progress(fmt.Sprintf("search_p50 (pass %d)", pass+1), i, len(queries))
			start := time.Now()
			page, err := crawlkeeper.Search(ctx, st, cfg, crawlkeeper.SearchQuery{Text: q.text(), Source: q.Source, Limit: q.Limit})
			if err != nil {
				return Result{}, fmt.Errorf("search_p50 %q: %w", q.text(), err)
			}
			d := time.Since(start)
			start = time.Now()
			n, err := raw.Search(ctx, q.Words, q.Phrase, q.Source, q.Limit)
			if err != nil {
				return Result{}, fmt.Errorf("search_p50 baseline %q: %w", q.text(), err)
			}
			b := time.Since(start)
			if n != len(page.Hits) {
				return Result{}, fmt.Errorf("search_p50 %q: crawlkeeper found %d hits on its first page, the raw query %d", q.text(), len(page.Hits), n)
			}
			if pass == 1 {
				value, baseline = append(value, d), append(baseline, b)
			}
		}
	}
	r := Result{Name: "search_p50", Unit: "ms (p50)", Value: p50(value), Baseline: p50(baseline), N: len(value),
		Target: "baseline/value >= 0.8; value <= 50 ms on SQLite"}
	if r.Value > 0 {
		r.Ratio = r.Baseline / r.Value
	}
	r.Met = r.Ratio >= 0.8
	if _, isSQLite := st.(interface{ Path() string }); isSQLite {
		r.Met = r.Met && r.Value <= 50
	}
	return r, nil
}

// searchCommon times one-word searches for the corpus's commonest words.
func searchCommon(ctx context.Context, opts *Options, st crawlkeeper.Store, raw Raw) (Result, error) {
	const words, rounds = 4, 5
	vocab := vocabulary()[:words]
	// The share of active documents holding the commonest words, for the
	// row's unit: counted from the corpus generator, not the store.
	holding := 0
	for i := 0; i < opts.Scale; i++ {
		it := SearchItem(i)
		if strings.Contains(" "+it["title"].(string)+" "+it["body"].(string)+" ", " "+vocab[words-1]+" ") {
			holding++
		}
	}
	cfg := &crawlkeeper.Config{}
	var value, baseline []time.Duration
	for round := 0; round < rounds+1; round++ { // the first round warms up
		for k, w := range vocab {
			opts.progress("search_common_ms", round*words+k, (rounds+1)*words)
			start := time.Now()
			page, err := crawlkeeper.Search(ctx, st, cfg, crawlkeeper.SearchQuery{Text: w, Limit: crawlkeeper.DefaultSearchLimit})
			if err != nil {
				return Result{}, fmt.Errorf("search_common_ms %q: %w", w, err)
			}
			d := time.Since(start)
			start = time.Now()
			n, err := raw.Search(ctx, []string{w}, false, "", crawlkeeper.DefaultSearchLimit)
			if err != nil {
				return Result{}, fmt.Errorf("search_common_ms baseline %q: %w", w, err)
			}
			b := time.Since(start)
			if n != len(page.Hits) {
				return Result{}, fmt.Errorf("search_common_ms %q: crawlkeeper found %d hits on its first page, the raw query %d", w, len(page.Hits), n)
			}
			if round > 0 {
				value, baseline = append(value, d), append(baseline, b)
			}
		}
	}
	r := Result{Name: "search_common_ms", Value: p50(value), Baseline: p50(baseline), N: len(value),
		Unit:   fmt.Sprintf("ms (p50; the 4th commonest word is in %.0f%% of %d active documents)", 100*float64(holding)/float64(max(opts.Scale, 1)), opts.Scale),
		Target: "value < 200 ms (at 50,000 records)"}
	if r.Value > 0 {
		r.Ratio = r.Baseline / r.Value
	}
	r.Met = r.Value < 200
	return r, nil
}

// runIngestSearch ingests the ingest benchmark's items into two stores,
// one with search on and one with it off, chunk by chunk in turn.
func runIngestSearch(ctx context.Context, opts *Options) (Result, error) {
	n := opts.Scale
	on, closeOn, err := opts.Open(ctx, "search-on")
	if err != nil {
		return Result{}, err
	}
	defer closeOn()
	off, closeOff, err := opts.Open(ctx, "search-off")
	if err != nil {
		return Result{}, err
	}
	defer closeOff()
	no := false
	gOn := &crawlkeeper.Ingester{Store: on, Config: &crawlkeeper.Config{}, Dates: opts.Dates, Now: func() time.Time { return Now }}
	gOff := &crawlkeeper.Ingester{Store: off, Config: &crawlkeeper.Config{Defaults: crawlkeeper.SourceConfig{Search: &no}}, Dates: opts.Dates, Now: func() time.Time { return Now }}
	var t timer
	for from := 0; from < n; from += chunk {
		to := min(from+chunk, n)
		opts.progress("ingest_new_search", from, n)
		lines := NDJSON(from, to, 0)
		first, second := &t.a, &t.b
		gFirst, gSecond := gOn, gOff
		if (from/chunk)%2 == 1 {
			// Alternate which store goes first, so neither always writes
			// into a page cache the other just warmed.
			first, second, gFirst, gSecond = second, first, gOff, gOn
		}
		if err := t.time(first, func() error { _, err := gFirst.Ingest(ctx, bytesReader(lines), crawlkeeper.Meta{}); return err }); err != nil {
			return Result{}, fmt.Errorf("ingest_new_search: %w", err)
		}
		if err := t.time(second, func() error { _, err := gSecond.Ingest(ctx, bytesReader(lines), crawlkeeper.Meta{}); return err }); err != nil {
			return Result{}, fmt.Errorf("ingest_new_search: %w", err)
		}
	}
	return ratioResult("ingest_new_search", "items/s", rate(n, t.a), rate(n, t.b), n, 0.75), nil
}
