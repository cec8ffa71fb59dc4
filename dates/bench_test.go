package dates

import (
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// isoCorpus returns distinct RFC 3339 strings as crawlers deliver them.
func isoCorpus(n int) []string {
	out := make([]string, n)
	t := time.Date(2024, 5, 15, 10, 30, 0, 0, time.UTC)
	for i := range out {
		u := t.Add(time.Duration(i) * 7919 * time.Second)
		if i%3 == 0 {
			out[i] = u.In(time.FixedZone("", 9*3600)).Format(time.RFC3339)
		} else {
			out[i] = u.Format(time.RFC3339)
		}
	}
	return out
}

func BenchmarkParseISO(b *testing.B) {
	p := New()
	in := isoCorpus(1024)
	o := crawlkeeper.DateOptions{Location: time.UTC}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := p.ParseDate(in[i%len(in)], o); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStdlibISO(b *testing.B) {
	in := isoCorpus(1024)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := time.Parse(time.RFC3339, in[i%len(in)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseMixed reads the mixed corpus with a warm cache: a crawl
// meets each long-tail string many times, and only the first costs a
// fallback call.
func BenchmarkParseMixed(b *testing.B) {
	p := New()
	in := MixedCorpus(20000, 1)
	o := crawlkeeper.DateOptions{Location: time.UTC, Now: time.Date(2024, 5, 20, 12, 0, 0, 0, time.UTC)}
	for _, s := range in {
		p.ParseDate(s, o)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p.ParseDate(in[i%len(in)], o)
	}
}
