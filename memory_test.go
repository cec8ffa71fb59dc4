//go:build !race

// The race detector multiplies memory and time, so the memory bounds are
// measured without it (.ci/run runs this test in a step of its own).

package crawlkeeper_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/jsonlz"
)

// heapPeak samples the live heap (the bytes the last garbage collection
// found reachable) until stopped and returns the largest value seen.
type heapPeak struct {
	peak atomic.Uint64
	stop chan struct{}
	wg   sync.WaitGroup
}

func watchHeap() *heapPeak {
	h := &heapPeak{stop: make(chan struct{})}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > h.peak.Load() {
				h.peak.Store(v)
			}
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

func (h *heapPeak) done() uint64 {
	close(h.stop)
	h.wg.Wait()
	return h.peak.Load()
}

// TestBoundedMemory runs a dry-run archive pass, a manual archive of every
// record and a purge with export over CRAWLKEEPER_MEMORY_RECORDS records
// (default 30,000; CI runs 1,000,000) under a memory limit, and checks
// that the live heap never grows past a bound that does not depend on the
// number of records. Remembering one id per record would take more than
// that bound at a million records; loading full rows, far more.
func TestBoundedMemory(t *testing.T) {
	n := 30_000
	if s := os.Getenv("CRAWLKEEPER_MEMORY_RECORDS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n <= 0 {
			t.Fatalf("CRAWLKEEPER_MEMORY_RECORDS=%q: give a number of records", s)
		}
	}
	const limit = 64 << 20 // GOMEMLIMIT for the test
	const bound = 32 << 20 // the live heap must stay under this
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(limit))
	ctx := context.Background()
	h := newHarness(t, "defaults:\n  max_age: 1d\n  purge_after: 1d\n")
	seedRecords(t, h, n)

	runtime.GC()
	peak := watchHeap()
	start := time.Now()
	h.set(t0.Add(10 * 24 * time.Hour))
	dry := h.run(crawlkeeper.ArchiveOptions{DryRun: true})
	if dry.Archived != n || dry.ByReason[crawlkeeper.ReasonEvent] != n/10 || dry.ByReason[crawlkeeper.ReasonAge] != n-n/10 {
		t.Fatalf("dry run over %d records = archived %d by %v: each record must count once, under its first rule", n, dry.Archived, dry.ByReason)
	}
	manual, err := h.archiver().ArchiveOlderThan(ctx, "", time.Hour)
	if err != nil || manual.Archived != n {
		t.Fatalf("manual archive = %+v %v", manual, err)
	}
	h.set(t0.Add(20 * 24 * time.Hour))
	path := filepath.Join(t.TempDir(), "purged.jsonl.zst")
	w, err := jsonlz.CreateDurable(path)
	if err != nil {
		t.Fatal(err)
	}
	purge, err := h.archiver().Purge(ctx, w)
	if err != nil || purge.Purged != n || purge.Exported != n {
		t.Fatalf("purge = %+v %v", purge, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	top := peak.done()
	t.Logf("%d records: dry run, manual archive and purge with export in %v, live heap peak %.1f MiB (bound %d MiB, GOMEMLIMIT %d MiB)",
		n, time.Since(start).Round(time.Second), float64(top)/(1<<20), bound>>20, limit>>20)
	if top > bound {
		t.Fatalf("live heap peaked at %.1f MiB over %d records, above the %d MiB bound", float64(top)/(1<<20), n, bound>>20)
	}
	r, err := jsonlz.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	lines := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines++
	}
	if sc.Err() != nil || lines != n {
		t.Fatalf("export holds %d lines (%v), want %d", lines, sc.Err(), n)
	}
	h.check()
}

// seedRecords writes n active records straight into the store's file (a
// million through Ingest would take minutes): every tenth has a passed
// event date and one version of history.
func seedRecords(t *testing.T, h *harness, n int) {
	t.Helper()
	db := h.store.DB()
	created := t0.UnixMicro()
	if _, err := db.Exec(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?)
		INSERT INTO active (id, key, key_parts, source, title, url, item, content_hash, crawled_at, last_updated_at, last_changed_at, version, event_at)
		SELECT x, 'k' || x, '[]', '', 't' || x, 'https://m.test/' || x,
			CAST('{"title":"t' || x || '","url":"https://m.test/' || x || '","body":"' || hex(randomblob(40)) || '"}' AS BLOB),
			'h' || x, ?, ?, ?, 2, CASE WHEN x % 10 = 0 THEN ? END FROM c`, n, created, created, created, t0.Add(time.Hour).UnixMicro()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO history (record_id, version, item, content_hash, valid_from, valid_to)
		SELECT id, 1, CAST('{"title":"old"}' AS BLOB), 'old', ?, ? FROM active WHERE id % 10 = 0`, created, created); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE meta SET value = ? WHERE name = 'next_id'`, n+1); err != nil {
		t.Fatal(err)
	}
}
