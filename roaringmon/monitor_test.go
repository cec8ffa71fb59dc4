package roaringmon_test

// The tests pair the monitor with the real SQLite persister; the package
// itself depends only on crawlkeeper.MonitorPersister.

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/monitortest"
	"github.com/crawlkeeper/crawlkeeper/roaringmon"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

// MustOpenStore opens an empty SQLite store in a temporary folder.
func MustOpenStore(tb testing.TB) *sqlite.Store {
	tb.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "crawlkeeper.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// MustOpen opens a monitor on p.
func MustOpen(tb testing.TB, p crawlkeeper.MonitorPersister, opts crawlkeeper.MonitorOptions, compactEvery int) *roaringmon.Monitor {
	tb.Helper()
	m, err := roaringmon.Open(context.Background(), p, opts)
	if err != nil {
		tb.Fatal(err)
	}
	m.CompactEvery = compactEvery
	return m
}

// TestPersister runs the monitor suite and the persister suite over the
// SQLite store; each handle is a store with its own connection pools on
// the same file, as another process would open.
func TestPersister(t *testing.T) {
	monitortest.RunPersister(t, func(tb testing.TB) func() crawlkeeper.Store {
		path := filepath.Join(tb.TempDir(), "crawlkeeper.db")
		return func() crawlkeeper.Store {
			s, err := sqlite.Open(context.Background(), path)
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { s.Close() })
			return s
		}
	})
}
