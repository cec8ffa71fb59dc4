package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/metrics"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// brokenStore fails the calls a test chooses.
type brokenStore struct {
	crawlkeeper.Store
	leaseErr, journalErr error
}

func (b *brokenStore) AcquireLease(ctx context.Context, name, owner string, ttl time.Duration, now time.Time) (bool, error) {
	if b.leaseErr != nil {
		return false, b.leaseErr
	}
	return b.Store.AcquireLease(ctx, name, owner, ttl, now)
}

func (b *brokenStore) AppendJournal(ctx context.Context, kind string, at time.Time, body json.RawMessage) error {
	if b.journalErr != nil {
		return b.journalErr
	}
	return b.Store.AppendJournal(ctx, kind, at, body)
}

// A scheduled archive pass of serve that cannot take its lease, or whose
// journal entry cannot be written, is logged and counted: it used to stop
// without a trace.
func TestArchiveTickSurfacesFailures(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name   string
		broken *brokenStore
		op     string
		log    string
	}{
		{"lease", &brokenStore{Store: st, leaseErr: crawlkeeper.Errorf(crawlkeeper.EINVALID, "permission denied for table leases")}, "archive_lease", "lease could not be taken"},
		{"journal", &brokenStore{Store: st, journalErr: crawlkeeper.Errorf(crawlkeeper.EINVALID, "journal is read-only")}, "archive_journal", "journal entry was not written"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, nil))
			m := metrics.New()
			holder := &crawlkeeper.LeaseHolder{Store: tc.broken, Name: crawlkeeper.ArchiverLease, Owner: "a", TTL: time.Minute, Now: now}
			arch := &crawlkeeper.Archiver{Store: tc.broken, Now: now}
			archiveTick(ctx, &archiveRunner{holder: holder, arch: arch, store: tc.broken}, m, logger, now)
			if got := testutil.ToFloat64(m.Errors.WithLabelValues(tc.op)); got != 1 {
				t.Errorf("crawlkeeper_errors_total{op=%q} = %v, want 1", tc.op, got)
			}
			if !strings.Contains(logs.String(), tc.log) || !strings.Contains(logs.String(), "level=ERROR") {
				t.Errorf("log = %q, want an error saying %q", logs.String(), tc.log)
			}
		})
	}
}

// A pass asked for by hand (API, dashboard) while another process holds
// the archiver lease is refused as a conflict naming the holder, and moves
// nothing; a dry run needs no lease.
func TestArchiveByHandTakesTheLease(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if ok, err := st.AcquireLease(ctx, crawlkeeper.ArchiverLease, "otherhost-9", time.Hour, time.Now()); err != nil || !ok {
		t.Fatalf("take the lease: %v %v", ok, err)
	}
	arch := &crawlkeeper.Archiver{Store: st}
	r := &archiveRunner{arch: arch, store: st,
		holder: &crawlkeeper.LeaseHolder{Store: st, Name: crawlkeeper.ArchiverLease, Owner: "here-1", TTL: time.Minute}}
	_, err = r.runByHand(ctx, crawlkeeper.ArchiveOptions{Force: true})
	if crawlkeeper.ErrorCode(err) != crawlkeeper.ECONFLICT || !strings.Contains(err.Error(), "otherhost-9") {
		t.Fatalf("pass by hand while another process holds the lease: %v, want a conflict naming otherhost-9", err)
	}
	if _, err := r.runByHand(ctx, crawlkeeper.ArchiveOptions{DryRun: true}); err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if err := st.ReleaseLease(ctx, crawlkeeper.ArchiverLease, "otherhost-9"); err != nil {
		t.Fatal(err)
	}
	if rep, err := r.runByHand(ctx, crawlkeeper.ArchiveOptions{}); err != nil || rep == nil {
		t.Fatalf("pass once the lease is free: %v %v", rep, err)
	}
}
