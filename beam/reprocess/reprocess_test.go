package reprocess

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/chain"
	"github.com/crawlkeeper/crawlkeeper/nats"
)

func TestShardsCoverEveryIDOnce(t *testing.T) {
	const n, count, block = 1000, 3, 7
	seen := map[int64]int{}
	for i := 0; i < count; i++ {
		sh := Shard{Index: i, Count: count, Block: block}
		// The scan's walk, as if every read returned less than a batch.
		for after := int64(0); ; {
			pos := sh.next(after)
			if pos >= n {
				break
			}
			hi := min(sh.blockEnd(pos), n)
			for id := pos + 1; id <= hi; id++ {
				if !sh.owns(id) {
					t.Fatalf("shard %d reads id %d it does not own", i, id)
				}
				seen[id]++
			}
			after = hi
		}
	}
	for id := int64(1); id <= n; id++ {
		if seen[id] != 1 {
			t.Fatalf("id %d read %d times", id, seen[id])
		}
	}
}

func TestTrackerWrapsAndCheckpoints(t *testing.T) {
	tr := &tracker{}
	if tr.TryClaim(Claim{Pass: 1, ID: 5}) {
		t.Fatal("claimed an id of pass 1 before wrapping to it")
	}
	tr = &tracker{}
	if !tr.TryClaim(Claim{Pass: 1, Wrap: true, End: 100, Started: 1}) {
		t.Fatal(tr.GetError())
	}
	if !tr.TryClaim(Claim{Pass: 1, ID: 40}) {
		t.Fatal(tr.GetError())
	}
	primary, residual, err := tr.TrySplit(0)
	if err != nil || residual == nil {
		t.Fatalf("checkpoint: %v %v", residual, err)
	}
	if !tr.IsDone() {
		t.Fatal("not done after a checkpoint")
	}
	if p := primary.(Restriction); p.After != 40 || p.End != 40 {
		t.Fatalf("primary %+v", p)
	}
	r := residual.(Restriction)
	if r != (Restriction{Pass: 1, After: 40, End: 100, Started: 1}) {
		t.Fatalf("residual %+v", r)
	}
	// The residual resumes in pass 1 and may wrap to pass 2 only at its
	// end; after the wrap, a checkpoint resumes in pass 2.
	tr = &tracker{r: r}
	if tr.TryClaim(Claim{Pass: 2, Wrap: true, End: 120}) {
		t.Fatal("wrapped before the end of the pass")
	}
	tr = &tracker{r: r}
	if !tr.TryClaim(Claim{Pass: 1, ID: 100}) || !tr.TryClaim(Claim{Pass: 2, Wrap: true, End: 120, Started: 2}) {
		t.Fatal(tr.GetError())
	}
	_, residual, _ = tr.TrySplit(0)
	if r := residual.(Restriction); r.Pass != 2 || r.After != 0 || r.End != 120 {
		t.Fatalf("residual after the wrap %+v", r)
	}
	if _, res, _ := (&tracker{r: r}).TrySplit(0.5); res != nil {
		t.Fatal("split a scan dynamically")
	}
}

func TestEveryRecordOncePerPass(t *testing.T) {
	onEachServer(t, func(t *testing.T, storeURL string) {
		st := MustOpenStore(t, storeURL)
		const n = 600
		ingest(t, st, 0, n, "text")
		ob := watch(t, storeURL)
		start(t, Options{Store: storeURL, Processors: []string{"dates", "fingerprint", "stats"}, Period: 1500 * time.Millisecond, Batch: 40, Shards: 3, Block: 100})
		const passes = 3
		waitFor(t, 3*time.Minute, "three passes", func() bool { return ob.passDone(passes, n) })

		ob.mu.Lock()
		for p := int64(1); p <= passes; p++ {
			if len(ob.scans[p]) != n {
				t.Errorf("pass %d handled %d of %d records", p, len(ob.scans[p]), n)
			}
			for id, k := range ob.scans[p] {
				if k != 1 {
					t.Errorf("pass %d handled record %d %d times", p, id, k)
				}
			}
		}
		ob.mu.Unlock()
		recs, err := st.ScanActive(context.Background(), 0, 0, n+1)
		if err != nil {
			t.Fatal(err)
		}
		// The chain's signature names each processor's version, as the
		// core's chain package builds it.
		ps, release, err := chain.Build([]string{"dates", "fingerprint", "stats"}, chain.Options{})
		if err != nil {
			t.Fatal(err)
		}
		wantChain := crawlkeeper.ChainSignature(ps)
		release()
		for _, r := range recs {
			if r.ProcessedAt == nil || r.ProcessedVersion != r.Version || r.ProcessedChain != wantChain {
				t.Fatalf("record %d: processed %v at version %d (of %d) by %q", r.ID, r.ProcessedAt, r.ProcessedVersion, r.Version, r.ProcessedChain)
			}
		}
	})
}

func TestNotificationsProcessed(t *testing.T) {
	onEachServer(t, func(t *testing.T, storeURL string) {
		natsURL := MustStartNATS(t)
		st := MustOpenStore(t, storeURL)
		ingest(t, st, 0, 100, "text")
		o := Options{Store: storeURL, NATS: natsURL, Processors: []string{"dates"}, Period: time.Hour, Batch: 50, Shards: 2, Block: 50}
		if err := EnsureReadStream(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		ob := watch(t, storeURL)
		// Each shard reads all its records in its first batch; the rest of
		// the pass is paced over the hour.
		start(t, o)
		waitFor(t, 2*time.Minute, "the first pass", func() bool { return ob.passDone(1, 100) })

		// The next pass is an hour away, and new records are beyond this
		// pass's end: only notifications reach them now.
		q, err := nats.Open(context.Background(), nats.Options{URL: natsURL})
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		ids := ingest(t, st, 100, 30, "text", crawlkeeper.PublishTouched(q))
		// The write-back stage reports a Work after its write commits, so
		// the wait is for both: every record handled as a notification,
		// and processed in the store.
		waitFor(t, 2*time.Minute, "notified records handled as notifications and processed", func() bool {
			ob.mu.Lock()
			for _, id := range ids {
				if ob.notify[id] == 0 {
					ob.mu.Unlock()
					return false
				}
			}
			ob.mu.Unlock()
			recs, err := st.GetMany(context.Background(), ids)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if r.ProcessedAt == nil {
					return false
				}
			}
			return len(recs) == len(ids)
		})
		ob.mu.Lock()
		defer ob.mu.Unlock()
		if _, ok := ob.scans[2]; ok {
			t.Errorf("a second pass began within the period")
		}
		for _, id := range ids {
			if n := ob.scans[1][id]; n != 0 {
				t.Errorf("record %d, created after the first pass began, was handled by it %d times", id, n)
			}
		}
	})
}

// mutator changes the record named by target in the store the first time
// it processes it, as a crawler's update landing between the pipeline's
// read and its write-back would.
type mutator struct {
	mu     sync.Mutex
	st     crawlkeeper.Store
	target int64
	seen   []int64 // versions of target processed
	t      *testing.T
}

var mut = &mutator{}

func init() {
	RegisterProcessor("mutate", func() crawlkeeper.Processor { return mut })
}

func (m *mutator) Name() string { return "mutate" }
func (m *mutator) Version() int { return 1 }

func (m *mutator) Process(_ context.Context, r *crawlkeeper.Record, derived map[string]any) error {
	derived["mutate"] = map[string]any{"version": r.Version}
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.ID != m.target {
		return nil
	}
	m.seen = append(m.seen, r.Version)
	if len(m.seen) == 1 {
		// The item of record target is "record 7", numbered 7.
		ingest(m.t, m.st, 7, 1, "changed")
	}
	return nil
}

func TestWriteBackRespectsVersions(t *testing.T) {
	onEachServer(t, func(t *testing.T, storeURL string) {
		st := MustOpenStore(t, storeURL)
		ids := ingest(t, st, 0, 50, "text")
		mut.mu.Lock()
		mut.st, mut.target, mut.seen, mut.t = st, ids[7], nil, t
		mut.mu.Unlock()
		ob := watch(t, storeURL)
		// Each shard reads all its records in its first batch, and the pass
		// is paced over an hour: the test sees one pass.
		start(t, Options{Store: storeURL, Processors: []string{"dates", "mutate"}, Period: time.Hour, Batch: 50, Shards: 2, Block: 25})
		waitFor(t, 2*time.Minute, "the first pass", func() bool { return ob.passDone(1, 50) })

		mut.mu.Lock()
		seen := append([]int64(nil), mut.seen...)
		mut.mu.Unlock()
		if len(seen) != 2 || seen[0] != 1 || seen[1] != 2 {
			t.Fatalf("record %d processed at versions %v, want [1 2]: the changed record must be processed again", ids[7], seen)
		}
		recs, err := st.GetMany(context.Background(), []int64{ids[7]})
		if err != nil || len(recs) != 1 {
			t.Fatal(recs, err)
		}
		r := recs[0]
		var d struct {
			Mutate struct{ Version int64 }
		}
		json.Unmarshal(r.Derived, &d)
		if r.Version != 2 || r.ProcessedVersion != 2 || d.Mutate.Version != 2 {
			t.Fatalf("record at version %d has processed_version %d and derived %s: the write-back of version 1 overwrote it", r.Version, r.ProcessedVersion, r.Derived)
		}
		ob.mu.Lock()
		defer ob.mu.Unlock()
		if ob.scans[1][ids[7]] != 1 {
			t.Fatalf("pass 1 read record %d %d times", ids[7], ob.scans[1][ids[7]])
		}
	})
}
