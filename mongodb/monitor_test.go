package mongodb_test

import (
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
	"github.com/crawlkeeper/crawlkeeper/mongodb"
	"github.com/crawlkeeper/crawlkeeper/monitortest"
)

// TestMonitor runs the embedded monitor's suites over the MongoDB
// persister; each handle is a store with its own client on the same
// database, as another process would open.
func TestMonitor(t *testing.T) {
	monitortest.RunPersister(t, func(tb testing.TB) func() crawlkeeper.Store {
		u := testdb.MongoURL(tb)
		return func() crawlkeeper.Store { return testdb.MustOpen(tb, u, mongodb.Open) }
	})
}
