package pipeline_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
	"github.com/crawlkeeper/crawlkeeper/processors"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

const benchRecords = 50000

var (
	benchStore *sqlite.Store
	benchDir   string
)

// benchFixture returns a store of benchRecords records, made once per
// test binary run: benchmarks run their function several times, and
// ingesting for each would dominate. TestMain removes it.
func benchFixture(b *testing.B) *sqlite.Store {
	if benchStore == nil {
		dir, err := os.MkdirTemp("", "crawlkeeper-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = dir
		benchStore, err = sqlite.Open(context.Background(), filepath.Join(dir, "crawlkeeper.db"))
		if err != nil {
			b.Fatal(err)
		}
		ingest(b, benchStore, 0, benchRecords, 1000)
	}
	return benchStore
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchStore != nil {
		benchStore.Close()
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// BenchmarkNoopPass runs full passes with a processor that does nothing:
// the framework's own cost (read, hand over, write back, checkpoint).
func BenchmarkNoopPass(b *testing.B) {
	st := benchFixture(b)
	e := &pipeline.Engine{Store: st, Processors: []crawlkeeper.Processor{processors.Noop{}}}
	if err := e.Init(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := e.RunPass(context.Background())
		if err != nil || rep.Processed != benchRecords {
			b.Fatalf("pass = %+v %v", rep, err)
		}
	}
	b.ReportMetric(float64(benchRecords*b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkKeysetRead is the baseline of the same table: the raw keyset
// query the pass issues, with every column read and nothing decoded.
func BenchmarkKeysetRead(b *testing.B) {
	st := benchFixture(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n := RawKeysetRead(b, st.ReadDB(), 500); n != benchRecords {
			b.Fatalf("read %d rows", n)
		}
	}
	b.ReportMetric(float64(benchRecords*b.N)/b.Elapsed().Seconds(), "records/s")
}

// RawKeysetRead reads the whole active table with
// `SELECT ... WHERE id > ? ORDER BY id LIMIT n` and returns the rows read.
func RawKeysetRead(tb testing.TB, db *sql.DB, limit int) int {
	const q = `SELECT id, key, key_parts, source, title, url, item, content_hash, crawled_at, last_updated_at, last_changed_at, version, event_at, date_errors, processed_at, processed_version, processed_chain, derived FROM active WHERE id > ? ORDER BY id LIMIT ?`
	after, total := int64(0), 0
	vals := make([]sql.RawBytes, 18)
	dest := make([]any, len(vals))
	for i := range vals {
		dest[i] = &vals[i]
	}
	for {
		rows, err := db.Query(q, after, limit)
		if err != nil {
			tb.Fatal(err)
		}
		n := 0
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				tb.Fatal(err)
			}
			var id int64
			for _, c := range vals[0] {
				id = id*10 + int64(c-'0')
			}
			after = id
			n++
		}
		rows.Close()
		total += n
		if n < limit {
			return total
		}
	}
}
