package mysql_test

import (
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore/sqlstoretest"
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

func myOpener(tb testing.TB) sqlstoretest.Opener {
	u := testdb.MySQLURL(tb)
	return func() (crawlkeeper.Store, *sqlstore.Store) {
		s := testdb.MustOpen(tb, u, mysql.Open)
		return s, s.Store
	}
}

// TestDictMigration migrates a dictionary of the first layout, stopped
// midway and finished by the next open.
func TestDictMigration(t *testing.T) {
	sqlstoretest.RunDictMigration(t, myOpener(t), "CREATE TABLE monitor_targets (id BIGINT NOT NULL PRIMARY KEY, name VARBINARY(1024) NOT NULL, UNIQUE KEY monitor_targets_name (name)) ENGINE=InnoDB")
}

func TestDictBlocks(t *testing.T) { sqlstoretest.RunDictBlocks(t, myOpener(t)) }
