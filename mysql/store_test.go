package mysql_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
	"github.com/crawlkeeper/crawlkeeper/mysql"
	"github.com/crawlkeeper/crawlkeeper/storetest"
)

// TestBackend runs the conformance suite, two stores on one database at
// once, and stores opening an empty database together, after which each
// embedded migration must have been applied once.
func TestBackend(t *testing.T) {
	storetest.RunBackend(t, storetest.Backend{NewURL: testdb.MySQLURL,
		Open:         func(ctx context.Context, u string) (crawlkeeper.Store, error) { return mysql.Open(ctx, u) },
		OpenedAtOnce: migratedOnce})
}

func migratedOnce(t *testing.T, u string) {
	s := testdb.MustOpen(t, u, mysql.Open)
	var n, next int
	// Each embedded migration applied once, however many processes raced.
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no migration files (%v)", err)
	}
	if err := s.DB().QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(files) {
		t.Fatalf("schema_migrations has %d rows (%v), want %d", n, err, len(files))
	}
	if err := s.DB().QueryRow(`SELECT value FROM meta WHERE name = 'next_id'`).Scan(&next); err != nil || next != 1 {
		t.Fatalf("next_id = %d (%v), want 1", next, err)
	}
	// Reads after the key locks must see the latest commits: sessions run
	// in READ COMMITTED, set through the variable each server knows.
	v := "@@transaction_isolation"
	if s.MariaDB() {
		v = "@@tx_isolation"
	}
	var iso string
	if err := s.DB().QueryRow(`SELECT ` + v).Scan(&iso); err != nil || iso != "READ-COMMITTED" {
		t.Fatalf("%s = %q (%v), want READ-COMMITTED", v, iso, err)
	}
}

// TestExactText stores values that case-insensitive or padding
// collations would confuse: sources differing in case or by a trailing
// space, and a NUL character.
func TestExactText(t *testing.T) {
	s := testdb.MustOpen(t, testdb.MySQLURL(t), mysql.Open)
	ctx := context.Background()
	var items []*crawlkeeper.Prepared
	for _, js := range []string{
		`{"title":"a\u0000b","url":"https://n.test/1","_source":"s"}`,
		`{"title":"a\u0000b","url":"https://n.test/1","_source":"S"}`,
		`{"title":"a\u0000b","url":"https://n.test/1","_source":"s "}`,
	} {
		p, err := (&crawlkeeper.Preparer{}).Prepare([]byte(js), 1, crawlkeeper.Meta{}, storetest.T0)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, p)
	}
	res, err := s.Ingest(ctx, &crawlkeeper.IngestBatch{Items: items, Now: storetest.T0})
	if err != nil {
		t.Fatal(err)
	}
	if res.Count(crawlkeeper.OutcomeInserted) != 3 {
		t.Fatalf("outcomes %v, want three records", res.Outcomes)
	}
	r, err := s.Get(ctx, res.IDs[0])
	if err != nil || r.Title != "a\x00b" || r.Source != "s" {
		t.Fatalf("read back %+v %v", r, err)
	}
	for _, src := range []string{"s", "S", "s "} {
		page, err := s.List(ctx, crawlkeeper.RecordQuery{Source: src})
		if err != nil || len(page.Records) != 1 || page.Records[0].Source != src {
			t.Fatalf("list source %q: %+v %v", src, page, err)
		}
	}
	st, err := s.Stats(ctx)
	if err != nil || len(st.Sources) != 3 {
		t.Fatalf("stats sources = %v %v, want three", st.Sources, err)
	}
}

// TestUnreachable reports a server that does not answer as unavailable,
// without the password.
func TestUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := mysql.Open(ctx, "mysql://u:secret@127.0.0.1:1/db?timeout=2s")
	if crawlkeeper.ErrorCode(err) != crawlkeeper.EUNAVAILABLE {
		t.Fatalf("open an unreachable server: %v, want %s", err, crawlkeeper.EUNAVAILABLE)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Fatalf("error shows the password: %v", err)
	}
}

func TestBadURL(t *testing.T) {
	for _, u := range []string{"mysql://root@127.0.0.1:3306", "mysql://root@127.0.0.1:3306/"} {
		if _, err := mysql.Open(context.Background(), u); crawlkeeper.ErrorCode(err) != crawlkeeper.EINVALID {
			t.Errorf("open %s: %v, want %s", u, err, crawlkeeper.EINVALID)
		}
	}
}

// A process stopped in the middle of a migration leaves the statements it
// ran applied (DDL commits by itself on MySQL and MariaDB) and the
// migration unrecorded; the next open applies the rest and records it.
func TestInterruptedMigrationFinishes(t *testing.T) {
	u := testdb.MySQLURL(t)
	s := testdb.MustOpen(t, u, mysql.Open)
	db := s.DB()
	// As if stopped after migration 015's first statement (on active) and
	// after 010 had run whole but before either was recorded.
	for _, q := range []string{
		`ALTER TABLE archive DROP COLUMN last_round, DROP COLUMN last_target`,
		`DELETE FROM schema_migrations WHERE version IN (10, 15)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	again, err := mysql.Open(context.Background(), u)
	if err != nil {
		t.Fatalf("reopen after an interrupted migration: %v", err)
	}
	defer again.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM schema_migrations WHERE version IN (10, 15)`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("migrations 10 and 15 recorded %d times (%v), want 2", n, err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'archive' AND column_name IN ('last_round', 'last_target')`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("archive has %d of the round and target columns (%v), want 2", n, err)
	}
}
