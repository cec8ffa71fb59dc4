package postgres_test

import (
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
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
