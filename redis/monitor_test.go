package redis_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/monitortest"
	"github.com/crawlkeeper/crawlkeeper/redis"
)

// EnvVar names the variable holding the test server's URL.
const EnvVar = "CRAWLKEEPER_TEST_REDIS"

var prefixSeq atomic.Int64

// MustPrefixURL returns the test server's URL with a key prefix of its own
// and deletes every key under it when the test ends.
func MustPrefixURL(tb testing.TB) string {
	tb.Helper()
	raw := os.Getenv(EnvVar)
	if raw == "" {
		tb.Skipf("set %s (for example redis://127.0.0.1:6379/0) to run the Redis monitor tests", EnvVar)
	}
	prefix := fmt.Sprintf("cktest-%d-%d-%d", os.Getpid(), time.Now().UnixNano(), prefixSeq.Add(1))
	u, err := url.Parse(raw)
	if err != nil {
		tb.Fatalf("%s: %v", EnvVar, err)
	}
	q := u.Query()
	q.Set("prefix", prefix)
	u.RawQuery = q.Encode()
	m, err := redis.Open(context.Background(), u.String(), crawlkeeper.MonitorOptions{})
	if err != nil {
		tb.Fatalf("%s=%s: %v", EnvVar, raw, err)
	}
	tb.Cleanup(func() {
		defer m.Close()
		ctx := context.Background()
		iter := m.Client().Scan(ctx, 0, prefix+":*", 1000).Iterator()
		for iter.Next(ctx) {
			m.Client().Del(ctx, iter.Val())
		}
		if err := iter.Err(); err != nil {
			tb.Errorf("clean up %s: %v", prefix, err)
		}
	})
	return u.String()
}

func TestConformance(t *testing.T) {
	monitortest.Run(t, func(tb testing.TB) func(crawlkeeper.MonitorOptions) crawlkeeper.Monitor {
		u := MustPrefixURL(tb)
		return func(opts crawlkeeper.MonitorOptions) crawlkeeper.Monitor {
			m, err := redis.Open(context.Background(), u, opts)
			if err != nil {
				tb.Fatal(err)
			}
			return m
		}
	})
}

func targetNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("company-%06d.example", i)
	}
	return out
}

// TestSize400k reports what a round of 400,000 targets done across 144
// buckets and merged takes in Redis: native bitmaps are one bit per
// dictionary id, about 50 KB per set.
func TestSize400k(t *testing.T) {
	if testing.Short() {
		t.Skip("400k targets; skipped with -short")
	}
	ctx := context.Background()
	m, err := redis.Open(ctx, MustPrefixURL(t), crawlkeeper.MonitorOptions{BucketRetention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	const n, buckets = 400000, 144
	names := targetNames(n)
	if _, err := m.Queue(ctx, crawlkeeper.QueueRequest{Round: "1", Targets: names, At: monitortest.T0}); err != nil {
		t.Fatal(err)
	}
	per := n / buckets
	for b := 0; b < buckets; b++ {
		end := (b + 1) * per
		if b == buckets-1 {
			end = n
		}
		marks := make([]crawlkeeper.Mark, 0, end-b*per)
		for _, name := range names[b*per : end] {
			marks = append(marks, crawlkeeper.Mark{Round: "1", Target: name, Kind: crawlkeeper.MarkDone, At: monitortest.T0.Add(time.Duration(b) * 10 * time.Minute)})
		}
		if _, err := m.Mark(ctx, marks); err != nil {
			t.Fatal(err)
		}
	}
	res, err := m.MergeBuckets(ctx, monitortest.T0.Add(48*time.Hour))
	if err != nil || res.Merged != buckets || res.Dropped != buckets {
		t.Fatalf("merge = %+v, %v", res, err)
	}
	st, err := m.Status(ctx, "1")
	if err != nil {
		t.Fatal(err)
	}
	if st.Done != n || st.Remaining != 0 || st.BucketBytes != 0 || st.Bytes < 2*n/8 {
		t.Fatalf("status = %+v", st)
	}
	t.Logf("400k done across %d buckets, merged and dropped: the round's sets take %d bytes in Redis", buckets, st.Bytes)
}

// BenchmarkMark marks batches of 10,000 known targets done.
func BenchmarkMark(b *testing.B) {
	ctx := context.Background()
	m, err := redis.Open(ctx, MustPrefixURL(b), crawlkeeper.MonitorOptions{})
	if err != nil {
		b.Fatal(err)
	}
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

// TestSparseMarks covers batches too sparse to send as one bitmap: they go
// as offsets, SETBIT by SETBIT.
func TestSparseMarks(t *testing.T) {
	ctx := context.Background()
	m, err := redis.Open(ctx, MustPrefixURL(t), crawlkeeper.MonitorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	names := targetNames(50000)
	if _, err := m.Queue(ctx, crawlkeeper.QueueRequest{Round: "1", Targets: names, At: monitortest.T0}); err != nil {
		t.Fatal(err)
	}
	marks := []crawlkeeper.Mark{
		{Round: "1", Target: names[49999], Kind: crawlkeeper.MarkDone, At: monitortest.T0},
		{Round: "1", Target: names[45000], Kind: crawlkeeper.MarkFailed, At: monitortest.T0},
	}
	if _, err := m.Mark(ctx, marks); err != nil {
		t.Fatal(err)
	}
	st, err := m.Status(ctx, "1")
	if err != nil || st.Done != 1 || st.Failed != 1 || st.Remaining != 49998 {
		t.Fatalf("status = %+v, %v", st, err)
	}
	ts, err := m.Target(ctx, names[49999])
	if err != nil || len(ts.Rounds) != 1 || !ts.Rounds[0].Done {
		t.Fatalf("target = %+v, %v", ts, err)
	}
}
