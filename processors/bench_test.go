package processors_test

import (
	"context"
	"math/rand"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper/processors"
)

// BenchmarkFingerprintProcess processes records of 80 words into an index
// of 1,000 records, as the pipeline does.
func BenchmarkFingerprintProcess(b *testing.B) {
	rng := rand.New(rand.NewSource(5))
	f := &processors.Fingerprint{}
	texts := make([]string, 1000)
	for i := range texts {
		texts[i] = strings.Join(paragraph(rng, 80), " ")
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := rec(int64(i%1000+1), "s", "A title", map[string]any{"body": texts[i%1000]})
		if err := f.Process(ctx, r, map[string]any{}); err != nil {
			b.Fatal(err)
		}
	}
}
