package postgres_test

import (
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore/sqlstoretest"
	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
	"github.com/crawlkeeper/crawlkeeper/monitortest"
	"github.com/crawlkeeper/crawlkeeper/postgres"
)

// TestMonitor runs the embedded monitor's suites over the PostgreSQL
// persister; each handle is a store with its own connection pool on the
// same schema, as another process would open.
func TestMonitor(t *testing.T) {
	monitortest.RunPersister(t, func(tb testing.TB) func() crawlkeeper.Store {
		u := testdb.PostgresURL(tb)
		return func() crawlkeeper.Store { return testdb.MustOpen(tb, u, postgres.Open) }
	})
}

func pgOpener(tb testing.TB) sqlstoretest.Opener {
	u := testdb.PostgresURL(tb)
	return func() (crawlkeeper.Store, *sqlstore.Store) {
		s := testdb.MustOpen(tb, u, postgres.Open)
		return s, s.Store
	}
}

// TestDictMigration migrates a dictionary of the first layout, stopped
// midway and finished by the next open.
func TestDictMigration(t *testing.T) {
	sqlstoretest.RunDictMigration(t, pgOpener(t), `CREATE TABLE monitor_targets (id bigint PRIMARY KEY, name bytea NOT NULL UNIQUE)`)
}

func TestDictBlocks(t *testing.T) { sqlstoretest.RunDictBlocks(t, pgOpener(t)) }
