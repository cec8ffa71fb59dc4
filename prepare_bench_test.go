package crawlkeeper

import "testing"

// BenchmarkPrepareBenchItem prepares an item shaped like the bench's, to
// measure what key building costs within the whole of Prepare.
func BenchmarkPrepareBenchItem(b *testing.B) {
	p := &Preparer{Config: &Config{}}
	item := []byte(`{"title":"Acme Data Engineer #123456","url":"https://jobs-example.test/posting/123456","company":"Acme","city":"Berlin","salary":"55000","description":"A long description of the job with several words in it.","scraped_at":"2025-03-01T10:00:00Z"}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := p.Prepare(item, 1, Meta{Source: "s"}, T0); err != nil {
			b.Fatal(err)
		}
	}
}
