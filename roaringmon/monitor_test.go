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

func TestConformance(t *testing.T) {
	// Each handle gets its own store connection pools on the same file, as
	// separate processes would.
	run := func(t *testing.T, compactEvery int) {
		monitortest.Run(t, func(tb testing.TB) func(crawlkeeper.MonitorOptions) crawlkeeper.Monitor {
			path := filepath.Join(tb.TempDir(), "crawlkeeper.db")
			return func(opts crawlkeeper.MonitorOptions) crawlkeeper.Monitor {
				s, err := sqlite.Open(context.Background(), path)
				if err != nil {
					tb.Fatal(err)
				}
				tb.Cleanup(func() { s.Close() })
				return MustOpen(tb, s, opts, compactEvery)
			}
		})
	}
	t.Run("Default", func(t *testing.T) { run(t, 0) })
	// Folding after every second entry exercises snapshots, the kept log
	// tail and reloads of handles that lag behind a fold.
	t.Run("CompactOften", func(t *testing.T) { run(t, 2) })
}
