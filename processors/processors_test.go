package processors_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/processors"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func rec(id int64, source, title string, item map[string]any) *crawlkeeper.Record {
	item["title"] = title
	b, _ := json.Marshal(item)
	return &crawlkeeper.Record{ID: id, Source: source, Title: title, URL: fmt.Sprintf("https://%s/%d", source, id),
		Item: b, Version: 1, CrawledAt: t0, LastUpdatedAt: t0, LastChangedAt: t0}
}

func TestDates(t *testing.T) {
	cfg := &crawlkeeper.Config{Sources: map[string]crawlkeeper.SourceConfig{"tokyo": {TimeZone: "Asia/Tokyo"}}}
	d := &processors.Dates{Config: cfg}
	for _, tc := range []struct {
		source string
		item   map[string]any
		want   string
		errs   []string
	}{
		{"tokyo", map[string]any{"deadline": "2030-01-05"}, "2030-01-05T15:00:00Z", nil},
		{"other", map[string]any{"deadline": "2030-01-05", "closing_date": "soon-ish"}, "2030-01-06T00:00:00Z", []string{"soon-ish"}},
		{"other", map[string]any{"body": "no dates"}, "", nil},
	} {
		r := rec(1, tc.source, "t", tc.item)
		r.DateErrors = []string{"stale error from an older parser"}
		derived := map[string]any{}
		if err := d.Process(context.Background(), r, derived); err != nil {
			t.Fatal(err)
		}
		got := ""
		if r.EventAt != nil {
			got = r.EventAt.UTC().Format(time.RFC3339)
		}
		if got != tc.want || fmt.Sprint(r.DateErrors) != fmt.Sprint(tc.errs) {
			t.Errorf("%v: event_at %q errors %q; want %q %q", tc.item, got, r.DateErrors, tc.want, tc.errs)
		}
	}
	if !d.WritesEvent() || d.Version() != 1 || (&processors.Dates{ParserVersion: 2}).Version() != 3 {
		t.Fatal("dates must write events and add the parser version to its own")
	}
}

// paragraph returns n words drawn from a 2,000-word vocabulary with a
// Zipf distribution, as words are in real text.
func paragraph(rng *rand.Rand, n int) []string {
	z := rand.NewZipf(rng, 1.1, 1, 1999)
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("w%dx", z.Uint64())
	}
	return out
}

// TestMinHashSimilarity checks the similarity estimate on texts of 80
// words: a one-word edit keeps it far above the threshold, unrelated texts
// stay far below, and identical texts score 1.
func TestMinHashSimilarity(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const n = 200
	near, far := 0, 0
	for i := 0; i < n; i++ {
		words := paragraph(rng, 80)
		edited := append([]string(nil), words...)
		edited[rng.Intn(len(edited))] = "changed"
		a, b, c := processors.MinHash(words), processors.MinHash(edited), processors.MinHash(paragraph(rng, 80))
		if s := processors.Similarity(&a, &a); s != 1 {
			t.Fatalf("identical texts: similarity %v", s)
		}
		if processors.Similarity(&a, &b) >= processors.DefaultFingerprintThreshold {
			near++
		}
		if processors.Similarity(&a, &c) >= processors.DefaultFingerprintThreshold {
			far++
		}
	}
	t.Logf("80-word texts: %d of %d one-word edits and %d of %d unrelated pairs at or above the threshold", near, n, far, n)
	if near < n*98/100 || far > 0 {
		t.Fatalf("one-word edits above the threshold: %d of %d (want 98%%+); unrelated pairs: %d (want none)", near, n, far)
	}
}

func TestFingerprintClusters(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	base := paragraph(rng, 300)
	edited := append([]string(nil), base...)
	edited[10] = "changed"
	sa := processors.MinHash(processors.Tokens("Backend engineer\n" + strings.Join(base, " ")))
	sb := processors.MinHash(processors.Tokens("Backend Engineer!\n" + strings.Join(edited, " ")))
	if s := processors.Similarity(&sa, &sb); s < processors.DefaultFingerprintThreshold {
		t.Fatalf("the near-duplicate pair has similarity %.2f; pick another edit", s)
	}
	f := &processors.Fingerprint{}
	ctx := context.Background()
	run := func(r *crawlkeeper.Record) map[string]any {
		t.Helper()
		d := map[string]any{}
		if err := f.Process(ctx, r, d); err != nil {
			t.Fatal(err)
		}
		return d["fingerprint"].(map[string]any)
	}
	a := rec(10, "a.test", "Backend engineer", map[string]any{"body": strings.Join(base, " "), "url": "https://a.test/x"})
	b := rec(4, "b.test", "Backend Engineer!", map[string]any{"body": strings.Join(edited, " "), "url": "https://b.test/y", "scraped_at": "volatile"})
	c := rec(7, "a.test", "Something else", map[string]any{"body": strings.Join(paragraph(rng, 60), " ")})
	short := rec(8, "a.test", "Hi", map[string]any{})

	if got := run(a); got["size"] != 1 || got["cluster"] != int64(10) {
		t.Fatalf("first record = %v", got)
	}
	if got := run(b); got["size"] != 2 || got["cluster"] != int64(4) {
		t.Fatalf("near-duplicate at another URL = %v, want cluster 4 of size 2", got)
	}
	if got := run(c); got["size"] != 1 || got["cluster"] != int64(7) {
		t.Fatalf("unrelated record = %v", got)
	}
	if got := run(short); got["size"] != 1 || got["signature"] != nil {
		t.Fatalf("too short a text = %v", got)
	}
	// The cluster follows the corpus: a new pass that no longer sees b
	// forgets it.
	mark := f.Mark()
	run(a)
	run(c)
	if n := f.Sweep(mark); n != 1 {
		t.Fatalf("swept %d records, want b", n)
	}
	if got := run(a); got["size"] != 1 || got["cluster"] != int64(10) {
		t.Fatalf("after b left: %v", got)
	}
	// A record whose text changes moves to its new cluster.
	b.Item, _ = json.Marshal(map[string]any{"title": "x", "body": strings.Join(paragraph(rng, 60), " ")})
	f.Load(b)
	if f.Len() != 3 {
		t.Fatalf("index holds %d records, want 3", f.Len())
	}
	if got := run(a); got["size"] != 1 {
		t.Fatalf("after b changed: %v", got)
	}
}

// TestFingerprintConcurrent shares one index between workers, as the
// engine does; run with -race.
func TestFingerprintConcurrent(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	texts := make([]string, 20)
	for i := range texts {
		texts[i] = strings.Join(paragraph(rng, 40), " ")
	}
	f := &processors.Fingerprint{}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				id := int64(w*200 + i + 1)
				r := rec(id, "s", "t", map[string]any{"body": texts[i%20]})
				if err := f.Process(context.Background(), r, map[string]any{}); err != nil {
					t.Error(err)
				}
			}
		}(w)
	}
	wg.Wait()
	d := map[string]any{}
	f.Process(context.Background(), rec(1, "s", "t", map[string]any{"body": texts[0]}), d)
	if got := d["fingerprint"].(map[string]any); got["size"] != 40 || got["cluster"] != int64(1) {
		t.Fatalf("cluster of a text shared by 40 records = %v", got)
	}
}

type memState struct {
	mu sync.Mutex
	m  map[string][]byte
	crawlkeeper.StateStore
}

func (s *memState) PutState(_ context.Context, name string, v []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[name] = v
	return nil
}

func (s *memState) GetState(_ context.Context, name string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[name], nil
}

func TestStats(t *testing.T) {
	s := &processors.Stats{Now: func() time.Time { return t0 }}
	r1 := rec(1, "a", "one", map[string]any{})
	r2 := rec(2, "a", "two", map[string]any{})
	r2.Version, r2.DateErrors = 3, []string{"x", "y"}
	r3 := rec(3, "b", "three", map[string]any{})
	for _, r := range []*crawlkeeper.Record{r1, r2, r3} {
		s.Load(r)
	}
	want := func(src string, c processors.SourceCounts) {
		t.Helper()
		if got := s.Snapshot()[src]; got != c {
			t.Fatalf("source %s = %+v, want %+v", src, got, c)
		}
	}
	want("a", processors.SourceCounts{Records: 2, Changes: 2, DateErrors: 2})
	// A change and a re-read replace the record's contribution.
	r1.Version = 2
	r2.DateErrors = nil
	mark := s.Mark()
	s.Process(context.Background(), r1, nil)
	s.Process(context.Background(), r2, nil)
	want("a", processors.SourceCounts{Records: 2, Changes: 3, DateErrors: 0})
	// b was not seen since the mark: it left the active set.
	if n := s.Sweep(mark); n != 1 {
		t.Fatalf("swept %d", n)
	}
	if _, ok := s.Snapshot()["b"]; ok {
		t.Fatal("source b is still counted after its only record left")
	}
	st := &memState{m: map[string][]byte{}}
	if err := s.Save(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	got, err := processors.LoadStats(context.Background(), st)
	if err != nil || !got.At.Equal(t0) || got.Sources["a"].Changes != 3 {
		t.Fatalf("saved stats = %+v %v", got, err)
	}
}

// writeScript writes an executable shell script that answers each record
// with an object, and misbehaves on request: a title containing "crash"
// exits, "hang" never answers, "garbage" answers with text, "refuse"
// answers with an error.
func writeScript(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "proc.sh")
	script := `#!/bin/sh
echo "started" >&2
exec awk '
/"title":"[^"]*crash/ { print "crashing on purpose" > "/dev/stderr"; exit 3 }
/"title":"[^"]*hang/ { while (1) {} }
/"title":"[^"]*garbage/ { print "this is not json"; fflush(); next }
/"title":"[^"]*refuse/ { print "{\"error\":\"refused\"}"; fflush(); next }
{ match($0, /"id":[0-9]+/); print "{\"bytes\":" length($0) ",\"id\":" substr($0, RSTART+5, RLENGTH-5) "}"; fflush() }
'
`
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestExec(t *testing.T) {
	x := &processors.Exec{Command: []string{"/bin/sh", writeScript(t)}, Timeout: 500 * time.Millisecond, ProcessorVersion: 4, Processes: 2}
	defer x.Close()
	ctx := context.Background()
	call := func(id int64, title string) (map[string]any, error) {
		d := map[string]any{}
		err := x.Process(ctx, rec(id, "s", title, map[string]any{"body": "b"}), d)
		if err != nil {
			return nil, err
		}
		var out map[string]any
		json.Unmarshal(d["exec"].(json.RawMessage), &out)
		return out, nil
	}
	out, err := call(42, "fine")
	if err != nil || out["id"] != float64(42) || out["bytes"].(float64) < 50 {
		t.Fatalf("answer = %v %v", out, err)
	}
	if x.Version() != 4 || x.Started() != 1 {
		t.Fatalf("version %d, started %d", x.Version(), x.Started())
	}
	for _, tc := range []struct{ title, want string }{
		{"crash now", "exited"},
		{"garbage please", "not a JSON object"},
		{"refuse this", "refused"},
		{"hang forever", "no answer within"},
	} {
		_, err := call(1, tc.title)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: error %v, want one saying %q", tc.title, err, tc.want)
		}
		if tc.title == "crash now" && !strings.Contains(err.Error(), "crashing on purpose") {
			t.Fatalf("the crash error should quote the program's standard error: %v", err)
		}
		// The program is restarted when needed: the next record works.
		if out, err := call(43, "fine again"); err != nil || out["id"] != float64(43) {
			t.Fatalf("after %s: %v %v", tc.title, out, err)
		}
	}
	if x.Started() < 3 {
		t.Fatalf("started %d programs: crashed and hung ones must be replaced", x.Started())
	}

	// Several workers share the programs.
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				id := int64(1000 + w*100 + i)
				out, err := call(id, "parallel")
				if err != nil || out["id"] != float64(id) {
					t.Errorf("record %d: %v %v", id, out, err)
				}
			}
		}(w)
	}
	wg.Wait()
}

func TestExecWithoutCommand(t *testing.T) {
	err := (&processors.Exec{}).Process(context.Background(), rec(1, "s", "t", map[string]any{}), map[string]any{})
	if err == nil || !strings.Contains(err.Error(), "pipeline.exec.command") {
		t.Fatalf("error = %v", err)
	}
}
