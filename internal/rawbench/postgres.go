package rawbench

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/rawbench/rawsql"
	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
)

// pgRaw sends each piece of work as one pgx batch in one transaction,
// rows passed as arrays and expanded with unnest: the fastest way to
// write many rows through the extended protocol short of COPY, which
// has no upsert or update form.
type pgRaw struct{ pool *pgxpool.Pool }

// pgCols are the record columns the raw baselines write.
const pgCols = rawsql.PostgresCols

const pgUnnest = `SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bytea[], $8::text[], $9::bigint[],
	$10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[], $14::text[], $15::bigint[], $16::bigint[], $17::text[], $18::bytea[],
	$19::text[], $20::text[], $21::bigint[], $22::bigint[], $23::bigint[], $24::bigint[], $25::double precision[]`

// pgRows bounds one statement's rows (about 1 MB of generated items).
const pgRows = 1000

type pgArrays struct {
	id, crawled, updated, changed, version, processedVersion []int64
	key, keyParts, source, title, url, hash, chain, config   []string
	item, derived                                            [][]byte
	eventAt, processedAt                                     []*int64
	dateErrors, searchText                                   []*string
	// zeros and zeroLogs are the counters of rawsql.FetchCols of new
	// records.
	zeros    []int64
	zeroLogs []float64
}

func newPGArrays(recs []*crawlkeeper.Record) (*pgArrays, error) {
	n := len(recs)
	a := &pgArrays{id: make([]int64, n), crawled: make([]int64, n), updated: make([]int64, n), changed: make([]int64, n),
		version: make([]int64, n), processedVersion: make([]int64, n), key: make([]string, n), keyParts: make([]string, n),
		source: make([]string, n), title: make([]string, n), url: make([]string, n), hash: make([]string, n), chain: make([]string, n),
		config: make([]string, n), item: make([][]byte, n), derived: make([][]byte, n), eventAt: make([]*int64, n),
		processedAt: make([]*int64, n), dateErrors: make([]*string, n), searchText: make([]*string, n),
		zeros: make([]int64, n), zeroLogs: make([]float64, n)}
	for i, r := range recs {
		if err := checkText(r); err != nil {
			return nil, err
		}
		a.id[i], a.key[i], a.keyParts[i], a.source[i], a.title[i], a.url[i] = r.ID, r.Key, storeenc.KeyPartsText(r.KeyParts), r.Source, r.Title, r.URL
		a.item[i], a.hash[i], a.derived[i], a.chain[i] = r.Item, r.ContentHash, storeenc.Blob(r.Derived), r.ProcessedChain
		if a.item[i] == nil {
			a.item[i] = []byte{}
		}
		a.crawled[i], a.updated[i], a.changed[i] = r.CrawledAt.UnixMicro(), r.LastUpdatedAt.UnixMicro(), r.LastChangedAt.UnixMicro()
		a.version[i], a.processedVersion[i] = r.Version, r.ProcessedVersion
		a.eventAt[i], a.processedAt[i], a.dateErrors[i] = storeenc.Micros(r.EventAt), storeenc.Micros(r.ProcessedAt), storeenc.DateErrorsText(r.DateErrors)
		st := r.SearchText
		a.searchText[i], a.config[i] = &st, r.SearchLanguage
		if a.config[i] == "" {
			a.config[i] = "simple"
		}
	}
	return a, nil
}

func (a *pgArrays) args() []any {
	return []any{a.id, a.key, a.keyParts, a.source, a.title, a.url, a.item, a.hash, a.crawled, a.updated, a.changed, a.version,
		a.eventAt, a.dateErrors, a.processedAt, a.processedVersion, a.chain, a.derived, a.searchText, a.config,
		a.zeros, a.zeros, a.zeros, a.zeros, a.zeroLogs}
}

func (s *pgRaw) batch(ctx context.Context, queue func(b *pgx.Batch) error) error {
	b := &pgx.Batch{}
	if err := queue(b); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return tx.SendBatch(ctx, b).Close() })
}

// Insert writes recs with multi-row INSERTs.
func (s *pgRaw) Insert(ctx context.Context, recs []*crawlkeeper.Record) error {
	return s.batch(ctx, func(b *pgx.Batch) error {
		return batches(recs, pgRows, func(c []*crawlkeeper.Record) error {
			a, err := newPGArrays(c)
			if err == nil {
				b.Queue(`INSERT INTO active (`+pgCols+`) `+pgUnnest+`)`, a.args()...)
			}
			return err
		})
	})
}

// Touch sets last_updated_at of the rows of keys and counts the delivery
// (rawsql.TouchSet) in one UPDATE.
func (s *pgRaw) Touch(ctx context.Context, keys []string, now time.Time) error {
	return s.batch(ctx, func(b *pgx.Batch) error {
		b.Queue(`UPDATE active SET `+rawsql.TouchSet("greatest", "$1")+` WHERE key = ANY($2)`, now.UnixMicro(), keys)
		return nil
	})
}

// Change inserts hist and updates each row's content, both from arrays.
func (s *pgRaw) Change(ctx context.Context, recs []*crawlkeeper.Record, hist []*crawlkeeper.HistoryEntry) error {
	return s.batch(ctx, func(b *pgx.Batch) error {
		if err := batches(hist, pgRows, func(c []*crawlkeeper.HistoryEntry) error {
			n := len(c)
			id, ver, from, to := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
			item, hash := make([][]byte, n), make([]string, n)
			for i, h := range c {
				id[i], ver[i], item[i], hash[i], from[i], to[i] = h.RecordID, h.Version, h.Item, h.ContentHash, h.ValidFrom.UnixMicro(), h.ValidTo.UnixMicro()
			}
			b.Queue(`INSERT INTO history (record_id, version, item, content_hash, valid_from, valid_to)
				SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bytea[], $4::text[], $5::bigint[], $6::bigint[])
				ON CONFLICT DO NOTHING`, id, ver, item, hash, from, to)
			return nil
		}); err != nil {
			return err
		}
		return batches(recs, pgRows, func(c []*crawlkeeper.Record) error {
			a, err := newPGArrays(c)
			if err != nil {
				return err
			}
			b.Queue(`UPDATE active a SET `+rawsql.ChangeSet("greatest", "a.", "u.last_updated_at")+`, title = u.title, url = u.url, item = u.item, content_hash = u.content_hash, last_updated_at = u.last_updated_at,
					last_changed_at = u.last_changed_at, version = u.version, event_at = u.event_at, date_errors = u.date_errors, search_text = u.search_text
				FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bytea[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::text[], $11::text[])
					AS u(id, title, url, item, content_hash, last_updated_at, last_changed_at, version, event_at, date_errors, search_text)
				WHERE a.id = u.id`,
				a.id, a.title, a.url, a.item, a.hash, a.updated, a.changed, a.version, a.eventAt, a.dateErrors, a.searchText)
			return nil
		})
	})
}

// SelectAge reads what an age rule selects in the index's order;
// unindexed, the planner is told not to use indexes.
func (s *pgRaw) SelectAge(ctx context.Context, cutoff time.Time, indexed bool) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if !indexed {
			if _, err := tx.Exec(ctx, `SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_indexonlyscan = off`); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, `SELECT id, version, last_updated_at FROM active WHERE crawled_at <= $1 ORDER BY crawled_at, id`, cutoff.UnixMicro())
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, v, u int64
			if err := rows.Scan(&id, &v, &u); err != nil {
				return err
			}
			n++
		}
		return rows.Err()
	})
	return n, err
}

// Move copies rows to the archive with INSERT ... SELECT and deletes them
// from active, in one transaction.
func (s *pgRaw) Move(ctx context.Context, ids []int64, now time.Time) error {
	return s.batch(ctx, func(b *pgx.Batch) error {
		b.Queue(`INSERT INTO archive (`+pgCols+`, item_bytes, archived_at, archive_reason)
			SELECT `+pgCols+`, length(item), $2, 'age' FROM active WHERE id = ANY($1)`, ids, now.UnixMicro())
		b.Queue(`DELETE FROM active WHERE id = ANY($1)`, ids)
		return nil
	})
}

func pgCount(rows pgx.Rows, err error) (int, int64, error) {
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	n, last := 0, int64(0)
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return n, last, err
		}
		if id, ok := vals[0].(int64); ok {
			last = id
		}
		n++
	}
	return n, last, rows.Err()
}

// Keyset reads one keyset page of active records in id order, every
// column.
func (s *pgRaw) Keyset(ctx context.Context, afterID int64, limit int) (int, int64, error) {
	return pgCount(s.pool.Query(ctx, `SELECT `+pgCols+` FROM active WHERE id > $1 ORDER BY id LIMIT $2`, afterID, limit))
}

// ProcessPage reads a keyset page and writes a result for each of its
// records with one UPDATE over unnest().
func (s *pgRaw) ProcessPage(ctx context.Context, afterID int64, limit int, at time.Time) (int, int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+pgCols+` FROM active WHERE id > $1 ORDER BY id LIMIT $2`, afterID, limit)
	if err != nil {
		return 0, afterID, err
	}
	var ids, versions []int64
	var derived [][]byte
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			rows.Close()
			return 0, afterID, err
		}
		id, v := vals[0].(int64), vals[11].(int64)
		ids, versions, derived = append(ids, id), append(versions, v), append(derived, rawsql.Derived(id, at.UnixMicro()))
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return 0, afterID, err
	}
	_, err = s.pool.Exec(ctx, `UPDATE active a SET processed_at = $4, processed_version = u.version, processed_chain = 'raw', derived = u.derived
		FROM unnest($1::bigint[], $2::bigint[], $3::bytea[]) AS u(id, version, derived) WHERE a.id = u.id AND a.version = u.version`,
		ids, versions, derived, at.UnixMicro())
	return len(ids), ids[len(ids)-1], err
}

// Newest reads the limit most recently updated active records.
func (s *pgRaw) Newest(ctx context.Context, limit int) (int, error) {
	n, _, err := pgCount(s.pool.Query(ctx, `SELECT `+pgCols+` FROM active ORDER BY last_updated_at DESC LIMIT $1`, limit))
	return n, err
}

// ArchiveInsert writes recs straight into the archive (payloads as they
// are, as the store keeps them), for building a large archive quickly.
func (s *pgRaw) ArchiveInsert(ctx context.Context, recs []*crawlkeeper.Record, at time.Time) error {
	return s.batch(ctx, func(b *pgx.Batch) error {
		return batches(recs, pgRows, func(c []*crawlkeeper.Record) error {
			a, err := newPGArrays(c)
			if err != nil {
				return err
			}
			ats, reasons, sizes := make([]int64, len(c)), make([]string, len(c)), make([]int64, len(c))
			for i, r := range c {
				ats[i], reasons[i], sizes[i] = at.UnixMicro(), string(crawlkeeper.ReasonAge), int64(len(r.Item))
			}
			b.Queue(`INSERT INTO archive (`+pgCols+`, archived_at, archive_reason, item_bytes) `+pgUnnest+`, $26::bigint[], $27::text[], $28::bigint[])`,
				append(a.args(), ats, reasons, sizes)...)
			return nil
		})
	})
}

// Search is the hand-written GIN query (rawsql.PostgresSearch).
func (s *pgRaw) Search(ctx context.Context, words []string, phrase bool, source string, limit int) (int, error) {
	q, args := rawsql.PostgresSearch(rawsql.Query{Words: words, Phrase: phrase, Source: source, Limit: limit})
	n, _, err := pgCount(s.pool.Query(ctx, q, args...))
	return n, err
}

// SyncIDs moves the id sequence past every stored id.
func (s *pgRaw) SyncIDs(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `SELECT setval('record_ids', greatest((SELECT coalesce(max(id), 0) FROM active), (SELECT coalesce(max(id), 0) FROM archive), 1))`)
	return err
}

// Analyze vacuums and analyzes the record tables, as autovacuum would
// after a bulk load: it sets the visibility map that index-only scans need
// and refreshes the planner's statistics.
func (s *pgRaw) Analyze(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `VACUUM ANALYZE active, archive, history`)
	return err
}
