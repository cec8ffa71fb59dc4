package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
	"github.com/crawlkeeper/crawlkeeper/postgres"
	"github.com/crawlkeeper/crawlkeeper/storetest"
)

// benchBatches prepares n typical items (about 400 bytes) in batches of
// size.
func benchBatches(tb testing.TB, n, size int) [][]*crawlkeeper.Prepared {
	prep := &crawlkeeper.Preparer{}
	var out [][]*crawlkeeper.Prepared
	for i := 0; i < n; i += size {
		var batch []*crawlkeeper.Prepared
		for j := i; j < min(i+size, n); j++ {
			js := fmt.Sprintf(`{"title":"Senior engineer %d","url":"https://jobs.example.com/%d","_source":"jobs","company":"Example %d","salary":"%d","location":"Remote","body":"We are looking for an engineer to build and run crawlers at scale. You will own ingestion, deduplication and the pipelines that keep our data fresh."}`, j, j, j%97, 50000+j)
			p, err := prep.Prepare([]byte(js), j+1, crawlkeeper.Meta{}, storetest.T0)
			if err != nil {
				tb.Fatal(err)
			}
			batch = append(batch, p)
		}
		out = append(out, batch)
	}
	return out
}

// BenchmarkIngest20k ingests 20,000 new items in batches of 1,000, then
// the same items again unchanged, and compares with the raw driver
// upserting the same rows into the same table in the same batches.
// Run with -bench Ingest20k -benchtime 1x.
func BenchmarkIngest20k(b *testing.B) {
	ctx := context.Background()
	batches := benchBatches(b, 20000, 1000)
	for i := 0; i < b.N; i++ {
		s := testdb.MustOpen(b, testdb.PostgresURL(b), postgres.Open)
		run := func(name string, now time.Time) {
			start := time.Now()
			for _, items := range batches {
				if _, err := s.Ingest(ctx, &crawlkeeper.IngestBatch{Items: items, Now: now}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(20000/time.Since(start).Seconds(), name+"_items/s")
		}
		run("new", storetest.T0)
		run("unchanged", storetest.T0.Add(time.Hour))

		raw := testdb.MustOpen(b, testdb.PostgresURL(b), postgres.Open)
		upsert := func(name string, now time.Time) {
			start := time.Now()
			id := int64(0)
			for _, items := range batches {
				var recs []*crawlkeeper.Record
				for _, it := range items {
					id++
					r := crawlkeeper.NewRecord(it, now)
					r.ID = id
					recs = append(recs, r)
				}
				if err := rawUpsert(ctx, raw, recs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(20000/time.Since(start).Seconds(), name+"_items/s")
		}
		upsert("raw_new", storetest.T0)
		upsert("raw_again", storetest.T0.Add(time.Hour))
	}
}

// rawUpsert is the baseline: one multi-row INSERT ... ON CONFLICT per
// batch over unnest() arrays, in its own implicit transaction.
func rawUpsert(ctx context.Context, s *postgres.Store, recs []*crawlkeeper.Record) error {
	n := len(recs)
	id, crawled, updated, changed, version := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	key, parts, source, title, url, hash := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	item := make([][]byte, n)
	for i, r := range recs {
		id[i], key[i], parts[i], source[i], title[i], url[i], item[i], hash[i] = r.ID, r.Key, storeenc.KeyPartsText(r.KeyParts), r.Source, r.Title, r.URL, r.Item, r.ContentHash
		crawled[i], updated[i], changed[i], version[i] = r.CrawledAt.UnixMicro(), r.LastUpdatedAt.UnixMicro(), r.LastChangedAt.UnixMicro(), r.Version
	}
	_, err := s.Pool().Exec(ctx, `INSERT INTO active (id, key, key_parts, source, title, url, item, content_hash, crawled_at, last_updated_at, last_changed_at, version)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bytea[], $8::text[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[])
		ON CONFLICT (key) DO UPDATE SET last_updated_at = excluded.last_updated_at, item = excluded.item, content_hash = excluded.content_hash`,
		id, key, parts, source, title, url, item, hash, crawled, updated, changed, version)
	return err
}
