package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

// lockedBuffer is a bytes.Buffer that a running command writes while the
// test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestScanOnceTakesTheScanLease checks that `scan --once` runs its pass
// under the scan lease that serve's passes hold: it refuses at once while
// another process holds it, naming the holder; with --wait it waits,
// saying whom for, and runs once the lease is free; a lease left by a
// killed process is taken over once expired.
func TestScanOnceTakesTheScanLease(t *testing.T) {
	c := newCLI(t)
	const now = "2026-01-01T01:00:00Z"
	c.ok(items(5), "ingest", "-", "--now", "2026-01-01T00:00:00Z")
	st, err := openTestStore(c.data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	const holder = "otherhost-4242"
	// Leases are on the wall clock, whatever --now says.
	if ok, err := st.AcquireLease(ctx, pipeline.ScanLease, holder, time.Hour, time.Now()); err != nil || !ok {
		t.Fatalf("take the lease: %v %v", ok, err)
	}
	_, until, err := st.LeaseOwner(ctx, pipeline.ScanLease, time.Now())
	if err != nil {
		t.Fatal(err)
	}

	_, errs, code := c.run("", "scan", "--once", "--now", now)
	if code != 1 || !strings.Contains(errs, holder) || !strings.Contains(errs, until.Format(time.RFC3339)) || !strings.Contains(errs, "--wait") {
		t.Fatalf("scan --once while another process holds the lease: exit %d, %q", code, errs)
	}
	if cp, err := pipeline.LoadCheckpoint(ctx, st); err != nil || cp != nil {
		t.Fatalf("a refused scan left a checkpoint: %+v %v", cp, err)
	}
	_, errs, code = c.run("", "scan", "--once", "--wait", "300ms", "--now", now)
	if code != 1 || !strings.Contains(errs, "still held by "+holder) {
		t.Fatalf("scan --once --wait 300ms: exit %d, %q", code, errs)
	}
	if _, errs, code := c.run("", "scan", "--wait", "5m"); code != 2 || !strings.Contains(errs, "--wait") {
		t.Fatalf("--wait without --once: exit %d, %q", code, errs)
	}

	// With --wait the pass runs once the holder lets go.
	var out bytes.Buffer
	var errb lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"scan", "--once", "--wait", "1m", "--now", now, "--data", c.data}, strings.NewReader(""), &out, &errb)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(errb.String(), "waiting for the scan lease held by "+holder) {
		if time.Now().After(deadline) {
			t.Fatalf("scan --once --wait did not say whom it waits for: %q", errb.String())
		}
		time.Sleep(10 * time.Millisecond) // polling a running command
	}
	if err := st.ReleaseLease(ctx, pipeline.ScanLease, holder); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != 0 || !strings.Contains(out.String(), "pass 1") || !strings.Contains(out.String(), "5 processed") {
		t.Fatalf("scan --once --wait after the release: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	// The pass gave the lease back.
	if owner, _, err := st.LeaseOwner(ctx, pipeline.ScanLease, time.Now()); err != nil || owner != "" {
		t.Fatalf("lease after the pass: %q %v", owner, err)
	}

	// A lease whose holder was killed is taken over once it expired.
	if ok, err := st.AcquireLease(ctx, pipeline.ScanLease, "deadhost-1", time.Minute, time.Now().Add(-time.Hour)); err != nil || !ok {
		t.Fatalf("take the lease: %v %v", ok, err)
	}
	if out := c.ok("", "scan", "--once", "--now", now); !strings.Contains(out, "pass 2") {
		t.Fatalf("scan --once over an expired lease: %q", out)
	}
}

// TestArchiveTakesTheArchiverLease checks that archive passes, manual
// archives and purges by hand run under the archiver lease serve's
// scheduled passes take: while another process holds it they wait (up to
// --wait), then refuse naming the holder, and move nothing; a dry run
// needs no lease.
func TestArchiveTakesTheArchiverLease(t *testing.T) {
	c := newCLI(t)
	const now = "2026-03-01T00:00:00Z"
	c.ok(items(5), "ingest", "-", "--now", "2026-01-01T00:00:00Z")
	st, err := openTestStore(c.data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	const holder = "otherhost-777"
	if ok, err := st.AcquireLease(ctx, crawlkeeper.ArchiverLease, holder, time.Hour, time.Now()); err != nil || !ok {
		t.Fatalf("take the lease: %v %v", ok, err)
	}
	for _, args := range [][]string{
		{"archive", "--wait", "0"},
		{"archive", "--manual", "--id", "1", "--wait", "300ms"},
		{"archive", "purge", "--no-export", "--wait", "0"},
		{"archive", "purge", "--export", filepath.Join(c.data, "refused.jsonl.zst"), "--wait", "0"},
	} {
		_, errs, code := c.run("", append(args, "--now", now)...)
		if code != 1 || !strings.Contains(errs, holder) {
			t.Fatalf("%v while another process holds the archiver lease: exit %d, %q", args, code, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(c.data, "refused.jsonl.zst")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused purge left its export file: %v", err)
	}
	if out := c.ok("", "archive", "--dry-run", "--json", "--now", now); !strings.Contains(out, `"archived":5`) {
		t.Fatalf("dry run under a held lease: %s", out)
	}
	if p, err := st.List(ctx, crawlkeeper.RecordQuery{Archived: true}); err != nil || len(p.Records) != 0 {
		t.Fatalf("records archived while the lease was held: %v %v", p, err)
	}
	if err := st.ReleaseLease(ctx, crawlkeeper.ArchiverLease, holder); err != nil {
		t.Fatal(err)
	}
	if out := c.ok("", "archive", "--json", "--now", now); !strings.Contains(out, `"archived":5`) {
		t.Fatalf("archive once the lease is free: %s", out)
	}
}
