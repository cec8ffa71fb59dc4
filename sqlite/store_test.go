package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
	"github.com/crawlkeeper/crawlkeeper/storetest"
)

// MustOpenStore opens an empty store in a temporary folder.
func MustOpenStore(tb testing.TB) *sqlite.Store {
	tb.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "crawlkeeper.db"))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(tb testing.TB) crawlkeeper.Store { return MustOpenStore(tb) })
}

func TestReopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.sqlite")
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := (&crawlkeeper.Preparer{}).Prepare([]byte(`{"title":"a","url":"https://r.test/"}`), 1, crawlkeeper.Meta{}, storetest.T0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Ingest(ctx, &crawlkeeper.IngestBatch{Items: []*crawlkeeper.Prepared{p}, Now: storetest.T0})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.Get(ctx, res.IDs[0])
	if err != nil || r.Title != "a" {
		t.Fatalf("after reopen: %v %v", r, err)
	}
	// The id counter survives too: a new record gets a new id.
	p2, _ := (&crawlkeeper.Preparer{}).Prepare([]byte(`{"title":"b","url":"https://r.test/"}`), 1, crawlkeeper.Meta{}, storetest.T0)
	res2, err := s.Ingest(ctx, &crawlkeeper.IngestBatch{Items: []*crawlkeeper.Prepared{p2}, Now: storetest.T0})
	if err != nil || res2.IDs[0] <= res.IDs[0] {
		t.Fatalf("id after reopen: %v %v", res2, err)
	}
}

// The embedded store syncs every commit by default and only with
// durability normal runs synchronous=NORMAL; DurabilityStatus reads the
// connection's setting back.
func TestDurabilitySetting(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		d    crawlkeeper.Durability
		safe bool
	}{{"", true}, {crawlkeeper.DurabilityFull, true}, {crawlkeeper.DurabilityNormal, false}} {
		s, err := sqlite.OpenWith(ctx, filepath.Join(t.TempDir(), "d.db"), crawlkeeper.StoreOptions{Durability: tc.d})
		if err != nil {
			t.Fatal(err)
		}
		st, err := s.DurabilityStatus(ctx)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if st.PowerLossSafe != tc.safe || st.Setting != tc.d.OrDefault() {
			t.Errorf("durability %q: status %+v, want power-loss safe = %v", tc.d, st, tc.safe)
		}
	}
}
