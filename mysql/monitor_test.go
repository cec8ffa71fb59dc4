package mysql_test

import (
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
	"github.com/crawlkeeper/crawlkeeper/monitortest"
	"github.com/crawlkeeper/crawlkeeper/mysql"
)

// TestMonitor runs the embedded monitor's suites over the MySQL persister;
// each handle is a store with its own connection pool on the same
// database, as another process would open.
func TestMonitor(t *testing.T) {
	monitortest.RunPersister(t, func(tb testing.TB) func() crawlkeeper.Store {
		u := testdb.MySQLURL(tb)
		return func() crawlkeeper.Store { return testdb.MustOpen(tb, u, mysql.Open) }
	})
}
