package sqlite_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/bench"
)

// BenchmarkScanActive reads pages of 500 active records, as a rescan does.
func BenchmarkScanActive(b *testing.B) {
	s := MustOpenStore(b)
	ctx := context.Background()
	g := &crawlkeeper.Ingester{Store: s, Config: &crawlkeeper.Config{}, Now: func() time.Time { return bench.Now }}
	if _, err := g.Ingest(ctx, bytes.NewReader(bench.NDJSON(0, 2000, 0)), crawlkeeper.Meta{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		recs, err := s.ScanActive(ctx, 0, 0, 500)
		if err != nil || len(recs) != 500 {
			b.Fatal(len(recs), err)
		}
	}
}
