package roaringmon_test

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/monitortest"
)

var ctx = context.Background()

func targetNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("company-%06d.example", i)
	}
	return out
}

func TestCompactAndReopen(t *testing.T) {
	s := MustOpenStore(t)
	m := MustOpen(t, s, crawlkeeper.MonitorOptions{}, 5)
	names := targetNames(1000)
	m.Queue(ctx, crawlkeeper.QueueRequest{Round: "1", Targets: names, At: monitortest.T0})
	for i := 0; i < 20; i++ {
		var marks []crawlkeeper.Mark
		for _, n := range names[i*50 : i*50+50] {
			marks = append(marks, crawlkeeper.Mark{Round: "1", Target: n, Kind: crawlkeeper.MarkDone, At: monitortest.T0.Add(time.Duration(i) * 7 * time.Minute)})
		}
		if _, err := m.Mark(ctx, marks); err != nil {
			t.Fatal(err)
		}
	}
	m.MergeBuckets(ctx, monitortest.T0.Add(time.Hour))
	want, _ := m.Status(ctx, "1")
	var logRows int
	s.ReadDB().QueryRow(`SELECT count(*) FROM monitor_log`).Scan(&logRows)
	if logRows > 22 {
		t.Fatalf("%d log rows after folding every 5 entries", logRows)
	}
	m.Close()

	m2 := MustOpen(t, s, crawlkeeper.MonitorOptions{}, 0)
	got, err := m2.Status(ctx, "1")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after reopen:\n%+v\nwant\n%+v", got, want)
	}
	if rem, _ := m2.Remaining(ctx, "1", "", 10); len(rem) != 0 {
		t.Fatalf("remaining after reopen = %v", rem)
	}
	if got.Done != 1000 || got.Remaining != 0 {
		t.Fatalf("reopened status = %+v", got)
	}
}

// TestSize400k checks the size target: 400,000 targets done in random
// order across 144 ten-minute buckets, merged: the round's sets take at
// most 64 KB.
func TestSize400k(t *testing.T) {
	if testing.Short() || raceEnabled {
		// The race detector makes bitmap work some 20 times slower; CI runs
		// this test once more without it.
		t.Skip("400k targets; skipped with -short and -race (run: go test -run TestSize400k ./roaringmon)")
	}
	s := MustOpenStore(t)
	m := MustOpen(t, s, crawlkeeper.MonitorOptions{BucketRetention: 24 * time.Hour}, 0)
	defer m.Close()
	const n, buckets = 400000, 144
	names := targetNames(n)
	if _, err := m.Queue(ctx, crawlkeeper.QueueRequest{Round: "1", Targets: names, At: monitortest.T0}); err != nil {
		t.Fatal(err)
	}
	order := rand.New(rand.NewSource(1)).Perm(n)
	per := n / buckets
	for b := 0; b < buckets; b++ {
		at := monitortest.T0.Add(time.Duration(b) * 10 * time.Minute)
		end := min((b+1)*per, n)
		if b == buckets-1 {
			end = n
		}
		marks := make([]crawlkeeper.Mark, 0, end-b*per)
		for _, i := range order[b*per : end] {
			marks = append(marks, crawlkeeper.Mark{Round: "1", Target: names[i], Kind: crawlkeeper.MarkDone, At: at})
		}
		if _, err := m.Mark(ctx, marks); err != nil {
			t.Fatal(err)
		}
	}
	res, err := m.MergeBuckets(ctx, monitortest.T0.Add(24*time.Hour))
	if err != nil || res.Merged != buckets {
		t.Fatalf("merge: %+v %v", res, err)
	}
	st, _ := m.Status(ctx, "1")
	if st.Done != n || st.Remaining != 0 || len(st.Buckets) != buckets {
		t.Fatalf("status = %+v", st)
	}
	t.Logf("400k done in %d random buckets, merged: sets %d bytes, kept bucket sets %d bytes", buckets, st.Bytes, st.BucketBytes)
	if st.Bytes > 64<<10 {
		t.Fatalf("the round's sets take %d bytes, over 64 KB", st.Bytes)
	}
	// Past the retention only the counts remain.
	m.MergeBuckets(ctx, monitortest.T0.Add(72*time.Hour))
	st, _ = m.Status(ctx, "1")
	if st.BucketBytes != 0 || st.Bytes > 64<<10 || st.Buckets[0].Done != int64(per) {
		t.Fatalf("after the retention: %+v", st)
	}
}

// BenchmarkMark marks batches of 10,000 known targets done; the marks/s
// metric is the one the size-and-speed target compares with ingest.
func BenchmarkMark(b *testing.B) {
	s := MustOpenStore(b)
	m := MustOpen(b, s, crawlkeeper.MonitorOptions{}, 0)
	defer m.Close()
	const n, batch = 400000, 10000
	names := targetNames(n)
	if _, err := m.Queue(ctx, crawlkeeper.QueueRequest{Round: "1", Targets: names, At: monitortest.T0}); err != nil {
		b.Fatal(err)
	}
	marks := make([]crawlkeeper.Mark, batch)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		at := monitortest.T0.Add(time.Duration(i) * time.Minute)
		for j := range marks {
			marks[j] = crawlkeeper.Mark{Round: "1", Target: names[(i*batch+j)%n], Kind: crawlkeeper.MarkDone, At: at}
		}
		if _, err := m.Mark(ctx, marks); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "marks/s")
}
