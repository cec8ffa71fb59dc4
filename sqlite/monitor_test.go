package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore/sqlstoretest"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

// opener opens handles on one SQLite file, closed when the test ends.
func opener(tb testing.TB) sqlstoretest.Opener {
	path := filepath.Join(tb.TempDir(), "crawlkeeper.db")
	return func() (crawlkeeper.Store, *sqlstore.Store) {
		s, err := sqlite.Open(context.Background(), path)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { s.Close() })
		return s, s.Store
	}
}

// TestDictMigration migrates a dictionary of the first layout, stopped
// midway and finished by the next open.
func TestDictMigration(t *testing.T) {
	sqlstoretest.RunDictMigration(t, opener(t), `CREATE TABLE monitor_targets (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)`)
}

func TestDictBlocks(t *testing.T) { sqlstoretest.RunDictBlocks(t, opener(t)) }
