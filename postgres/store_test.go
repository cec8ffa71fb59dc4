package postgres_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
	"github.com/crawlkeeper/crawlkeeper/postgres"
	"github.com/crawlkeeper/crawlkeeper/storetest"
)

// TestBackend runs the conformance suite, two stores on one database at
// once, and stores opening an empty database together, after which each
// embedded migration must have been applied once.
func TestBackend(t *testing.T) {
	storetest.RunBackend(t, storetest.Backend{NewURL: testdb.PostgresURL,
		Open:         func(ctx context.Context, u string) (crawlkeeper.Store, error) { return postgres.Open(ctx, u) },
		OpenedAtOnce: migratedOnce})
}

func migratedOnce(t *testing.T, u string) {
	s := testdb.MustOpen(t, u, postgres.Open)
	var n int
	// Each embedded migration applied once, however many processes raced.
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no migration files (%v)", err)
	}
	if err := s.Pool().QueryRow(context.Background(), `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(files) {
		t.Fatalf("schema_migrations has %d rows (%v), want %d", n, err, len(files))
	}
}

// TestNULInText stores text with NUL characters, which PostgreSQL text
// cannot hold, and reads it back unchanged.
func TestNULInText(t *testing.T) {
	s := testdb.MustOpen(t, testdb.PostgresURL(t), postgres.Open)
	ctx := context.Background()
	p, err := (&crawlkeeper.Preparer{}).Prepare([]byte(`{"title":"a\u0000b\uffff","url":"https://n.test/\u0000","_source":"s\u0000"}`), 1, crawlkeeper.Meta{}, storetest.T0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Ingest(ctx, &crawlkeeper.IngestBatch{Items: []*crawlkeeper.Prepared{p}, Now: storetest.T0})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Get(ctx, res.IDs[0])
	if err != nil {
		t.Fatal(err)
	}
	if r.Title != "a\x00b\uffff" || r.URL != p.URL || r.Source != "s\x00" {
		t.Fatalf("read back %q %q %q", r.Title, r.URL, r.Source)
	}
	page, err := s.List(ctx, crawlkeeper.RecordQuery{Source: "s\x00", Q: "A\x00B"})
	if err != nil || len(page.Records) != 1 {
		t.Fatalf("list by source and title with NUL: %v %v", page, err)
	}
	if page, _ := s.List(ctx, crawlkeeper.RecordQuery{Source: "s"}); len(page.Records) != 0 {
		t.Fatalf("source %q matched %q", "s", r.Source)
	}
}

// TestUnreachable reports a server that does not answer as unavailable,
// without the password.
func TestUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := postgres.Open(ctx, "postgres://u:secret@127.0.0.1:1/db?connect_timeout=2")
	if crawlkeeper.ErrorCode(err) != crawlkeeper.EUNAVAILABLE {
		t.Fatalf("open an unreachable server: %v, want %s", err, crawlkeeper.EUNAVAILABLE)
	}
	if msg := fmt.Sprint(err); strings.Contains(msg, "secret") {
		t.Fatalf("error shows the password: %s", msg)
	}
}

// Durability full runs sessions with synchronous_commit=on whatever the
// server's default, normal with off, and a value in the URL wins.
func TestDurabilitySetting(t *testing.T) {
	ctx := context.Background()
	u := testdb.PostgresURL(t)
	for _, tc := range []struct {
		d      crawlkeeper.Durability
		url    string
		commit string
	}{{"", u, "on"}, {crawlkeeper.DurabilityNormal, u, "off"}, {crawlkeeper.DurabilityNormal, u + "&synchronous_commit=local", "local"}} {
		s, err := postgres.OpenWith(ctx, tc.url, crawlkeeper.StoreOptions{Durability: tc.d})
		if err != nil {
			t.Fatal(err)
		}
		var got string
		err = s.Pool().QueryRow(ctx, `SHOW synchronous_commit`).Scan(&got)
		st, serr := s.DurabilityStatus(ctx)
		s.Close()
		if err != nil || serr != nil {
			t.Fatal(err, serr)
		}
		if got != tc.commit || st.PowerLossSafe != (tc.commit != "off") {
			t.Errorf("durability %q: synchronous_commit=%s (status %+v), want %s", tc.d, got, st, tc.commit)
		}
	}
}
