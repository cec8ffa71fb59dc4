package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// RunTwoProcesses checks a server store shared by two processes: a and b
// must be two stores on the same database with connection pools of their
// own. Both ingest overlapping keys from several goroutines while records
// are archived, restored and revived through both; afterwards every key
// must be stored exactly once, in active or archive, and Check must pass
// on each. Then both race for the same leases: each round exactly one may
// win.
func RunTwoProcesses(t *testing.T, a, b crawlkeeper.Store) {
	ctx := context.Background()
	const (
		keys    = 40
		batches = 40
		perItem = 8
	)
	stores := []crawlkeeper.Store{a, b}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	retry := func(f func() error) error {
		for {
			err := f()
			if crawlkeeper.ErrorCode(err) != crawlkeeper.ECONFLICT {
				return err
			}
		}
	}
	for p, s := range stores {
		for w := 0; w < 2; w++ {
			wg.Add(1)
			go func(p, w int, s crawlkeeper.Store) {
				defer wg.Done()
				prep := &crawlkeeper.Preparer{}
				for i := 0; i < batches; i++ {
					now := T0.Add(time.Duration(i) * time.Second)
					bt := &crawlkeeper.IngestBatch{Now: now}
					for j := 0; j < perItem; j++ {
						k := (i*perItem + j*5 + p*7 + w*3) % keys
						js := item(fmt.Sprint("P", k), "https://p.test/", "v", fmt.Sprint((i+p+w)%3))
						it, err := prep.Prepare([]byte(js), j+1, crawlkeeper.Meta{}, now)
						if err != nil {
							errs <- err
							return
						}
						bt.Items = append(bt.Items, it)
					}
					if err := retry(func() error { _, err := s.Ingest(ctx, bt); return err }); err != nil {
						errs <- fmt.Errorf("process %d writer %d: ingest: %w", p, w, err)
						return
					}
				}
			}(p, w, s)
		}
		// Each process also archives what it finds and restores some of
		// it, so keys move between the tables while others ingest them.
		wg.Add(1)
		go func(p int, s crawlkeeper.Store) {
			defer wg.Done()
			for i := 0; i < batches; i++ {
				due, err := s.SelectDue(ctx, crawlkeeper.DueQuery{Rule: crawlkeeper.DueByAge, Cutoff: T0.Add(time.Hour), Limit: 6})
				if err != nil {
					errs <- fmt.Errorf("process %d: select due: %w", p, err)
					return
				}
				var moves []crawlkeeper.Move
				for _, d := range due {
					if int(d.ID)%2 == p {
						moves = append(moves, crawlkeeper.Move{ID: d.ID, Version: d.Version, LastUpdatedAt: d.LastUpdatedAt, Reason: crawlkeeper.ReasonManual})
					}
				}
				var moved []int64
				if err := retry(func() error { var err error; moved, err = s.Archive(ctx, moves, T0); return err }); err != nil {
					errs <- fmt.Errorf("process %d: archive: %w", p, err)
					return
				}
				if i%3 == 0 && len(moved) > 0 {
					if err := retry(func() error { _, err := s.Restore(ctx, moved[:1]); return err }); err != nil {
						errs <- fmt.Errorf("process %d: restore: %w", p, err)
						return
					}
				}
			}
		}(p, s)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	byKey := map[string]int64{}
	ids := map[int64]bool{}
	for _, archived := range []bool{false, true} {
		page, err := a.List(ctx, crawlkeeper.RecordQuery{Archived: archived, Limit: 10000})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Records {
			if id, dup := byKey[r.Key]; dup {
				t.Fatalf("key %s is stored twice: ids %d and %d", r.Key, id, r.ID)
			}
			if ids[r.ID] {
				t.Fatalf("id %d is stored twice", r.ID)
			}
			byKey[r.Key], ids[r.ID] = r.ID, true
		}
	}
	if len(byKey) != keys {
		t.Fatalf("%d records for %d keys", len(byKey), keys)
	}
	for i, s := range stores {
		rep, err := s.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK {
			t.Fatalf("check through process %d: %+v", i, rep.Violations)
		}
	}

	for round := 0; round < 20; round++ {
		name := fmt.Sprint("lease-", round)
		won := make([]bool, len(stores))
		var lw sync.WaitGroup
		var lerr error
		var mu sync.Mutex
		for i, s := range stores {
			lw.Add(1)
			go func(i int, s crawlkeeper.Store) {
				defer lw.Done()
				ok, err := s.AcquireLease(ctx, name, fmt.Sprint("p", i), time.Minute, T0)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					lerr = err
				}
				won[i] = ok
			}(i, s)
		}
		lw.Wait()
		if lerr != nil {
			t.Fatal(lerr)
		}
		if won[0] == won[1] {
			t.Fatalf("lease %s: process 0 won %v, process 1 won %v; exactly one must", name, won[0], won[1])
		}
	}
}

// Backend describes a store backend for RunBackend.
type Backend struct {
	// NewURL returns the URL of a new, empty store (internal/testdb).
	NewURL func(tb testing.TB) string
	// Open opens a store at a URL, as the backend's Open does.
	Open func(ctx context.Context, rawURL string) (crawlkeeper.Store, error)
	// OpenedAtOnce, when set, checks the database that four stores just
	// opened together: that each migration was applied once, say.
	OpenedAtOnce func(t *testing.T, rawURL string)
}

// RunBackend runs what every backend that several processes can share
// must pass: the conformance suite (Run), two stores on one database
// ingesting, archiving and restoring at once (RunTwoProcesses), and four
// stores opening an empty database at the same moment (their migrations
// must not collide).
func RunBackend(t *testing.T, b Backend) {
	open := func(tb testing.TB, u string) crawlkeeper.Store {
		tb.Helper()
		s, err := b.Open(context.Background(), u)
		if err != nil {
			tb.Fatalf("open %s: %v", u, err)
		}
		tb.Cleanup(func() { s.Close() })
		return s
	}
	t.Run("Conformance", func(t *testing.T) {
		Run(t, func(tb testing.TB) crawlkeeper.Store { return open(tb, b.NewURL(tb)) })
	})
	t.Run("TwoProcesses", func(t *testing.T) {
		u := b.NewURL(t)
		RunTwoProcesses(t, open(t, u), open(t, u))
	})
	t.Run("OpenAtOnce", func(t *testing.T) {
		u := b.NewURL(t)
		errs := make(chan error, 4)
		for i := 0; i < 4; i++ {
			go func() {
				s, err := b.Open(context.Background(), u)
				if err == nil {
					err = s.Close()
				}
				errs <- err
			}()
		}
		for i := 0; i < 4; i++ {
			if err := <-errs; err != nil {
				t.Fatalf("four stores opening an empty database at once: %v", err)
			}
		}
		if b.OpenedAtOnce != nil {
			b.OpenedAtOnce(t, u)
		}
	})
}
