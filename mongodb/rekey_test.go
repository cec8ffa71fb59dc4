package mongodb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/config"
	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
	"github.com/crawlkeeper/crawlkeeper/mongodb"
)

// TestCrashDuringRekey stops a rekey run after each step of its key
// changes and merges, as a killed process would, then runs it again: the
// rerun rolls the intent forward, and the store ends with every pair
// merged, every version kept and Check passing.
func TestCrashDuringRekey(t *testing.T) {
	ctx := context.Background()
	old, err := config.Parse([]byte("defaults:\n  key_rules:\n    url: {canonical: false}\n    title: {fold: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	steps := []string{"rekey:intent", "rekey:claimed", "rekey:updated",
		"merge:intent", "merge:history", "merge:victims", "merge:survivor", "merge:keys", "merge:old history", "merge:journal"}
	for _, step := range steps {
		t.Run(step, func(t *testing.T) {
			s := testdb.MustOpen(t, testdb.MongoURL(t), mongodb.Open)
			t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
			var items []*crawlkeeper.Prepared
			for i := range 3 {
				for j, u := range []string{"https://x.example/%d/?utm_source=a", "https://x.example/%d"} {
					b, _ := json.Marshal(map[string]any{"_source": "s", "title": fmt.Sprintf("T%d", i), "url": fmt.Sprintf(u, i), "n": j})
					p, err := (&crawlkeeper.Preparer{Config: old}).Prepare(b, 1, crawlkeeper.Meta{}, t0)
					if err != nil {
						t.Fatal(err)
					}
					items = append(items, p)
				}
			}
			for i, p := range items {
				if _, err := s.Ingest(ctx, &crawlkeeper.IngestBatch{Items: []*crawlkeeper.Prepared{p}, Now: t0.Add(time.Duration(i) * time.Minute)}); err != nil {
					t.Fatal(err)
				}
			}
			crashed := false
			mongodb.SetCrashAt(s, func(name string) error {
				if name == step && !crashed {
					crashed = true
					return errCrash
				}
				return nil
			})
			run := func() (*crawlkeeper.RekeyReport, error) {
				return (&crawlkeeper.Rekeyer{Store: s, Config: &crawlkeeper.Config{}, PageSize: 2}).Run(ctx)
			}
			if _, err := run(); err == nil || !crashed {
				t.Fatalf("the run did not stop at %s (err %v)", step, err)
			}
			mongodb.SetCrashAt(s, nil)
			if _, err := run(); err != nil {
				t.Fatal(err)
			}
			mustCheck(t, s)
			st, err := s.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.Active != 3 || st.History != 3 {
				t.Fatalf("after the rerun: %d active records with %d history entries, want 3 and 3", st.Active, st.History)
			}
			j, err := s.Journal(ctx, crawlkeeper.RekeyJournal, 10)
			if err != nil || len(j) != 3 {
				t.Fatalf("%d merges journaled (%v), want 3", len(j), err)
			}
			again, err := run()
			if err != nil || again.Merges != 0 || again.Rekeyed != 0 {
				t.Fatalf("a third run: %+v %v", again, err)
			}
		})
	}
}
