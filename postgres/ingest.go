package postgres

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
	"github.com/jackc/pgx/v5"
)

// lockKeysSQL inserts the missing keys of $1 into record_keys and locks
// the rows of all of them, in key order, without writing existing rows
// (see the package documentation).
const lockKeysSQL = `INSERT INTO record_keys (key) SELECT k FROM unnest($1::text[]) AS k ORDER BY k COLLATE "C"
	ON CONFLICT (key) DO UPDATE SET key = excluded.key WHERE false`

// maxStatementBytes bounds the payload bytes of one multi-row statement:
// PostgreSQL limits one array value to 1 GB, and smaller statements keep
// memory flat when items are large.
const maxStatementBytes = 32 << 20

// Ingest implements crawlkeeper.Store: the whole batch is one transaction.
// The keys are locked and their records read in one pipelined round trip,
// the domain's Merge decides each item (crawlkeeper.PlanIngest), and the
// writes go out as one pipelined batch of multi-row statements.
func (s *Store) Ingest(ctx context.Context, b *crawlkeeper.IngestBatch) (*crawlkeeper.IngestResult, error) {
	if len(b.Items) == 0 {
		return &crawlkeeper.IngestResult{Outcomes: []crawlkeeper.Outcome{}, IDs: []int64{}}, nil
	}
	var res *crawlkeeper.IngestResult
	var marked func()
	err := s.inTx(ctx, "ingest", func(tx pgx.Tx) error {
		var err error
		marked = nil // an aborted attempt's marks never committed
		if res, err = s.ingest(ctx, tx, b); err != nil {
			return err
		}
		marked, err = s.writeMarks(ctx, tx, b.Marks)
		return err
	})
	if err != nil {
		return nil, err
	}
	if marked != nil {
		marked()
		res.MarksWritten = true
	}
	return res, nil
}

func (s *Store) ingest(ctx context.Context, tx pgx.Tx, b *crawlkeeper.IngestBatch) (*crawlkeeper.IngestResult, error) {
	keys := encAll(crawlkeeper.DistinctKeys(b.Items))
	sorted := slices.Clone(keys)
	slices.Sort(sorted)

	batch := &pgx.Batch{}
	batch.Queue(lockKeysSQL, sorted)
	batch.Queue(`SELECT `+recordCols+` FROM active WHERE key = ANY($1)`, keys)
	batch.Queue(`SELECT `+archiveCols+` FROM archive WHERE key = ANY($1)`, keys)
	br := tx.SendBatch(ctx, batch)
	state := make(map[string]*crawlkeeper.Record, len(keys))
	_, err := br.Exec()
	for _, archived := range []bool{false, true} {
		if err != nil {
			break
		}
		var rows pgx.Rows
		rows, err = br.Query()
		for err == nil && rows.Next() {
			var r *crawlkeeper.Record
			if r, err = scanRecord(rows, archived); err == nil {
				// A key in both tables breaks an invariant Check reports;
				// the active copy is the one ingest works on, as in the
				// embedded store.
				if state[r.Key] == nil {
					state[r.Key] = r
				}
			}
		}
		if rows != nil {
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("look up keys: %w", err)
	}

	var ids []int64
	if n := crawlkeeper.NewKeyCount(b.Items, state); n > 0 {
		rows, err := tx.Query(ctx, `SELECT nextval('record_ids') FROM generate_series(1, $1)`, n)
		if err != nil {
			return nil, fmt.Errorf("take ids: %w", err)
		}
		ids, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return nil, fmt.Errorf("take ids: %w", err)
		}
		// Concurrent callers may interleave, so the values are unique
		// but need not arrive in order.
		slices.Sort(ids)
	}

	w, res := crawlkeeper.PlanIngest(b, state, ids)
	batch = &pgx.Batch{}
	if len(w.DeleteArchive) > 0 {
		batch.Queue(`DELETE FROM archive WHERE id = ANY($1)`, w.DeleteArchive)
	}
	queueInsertActive(batch, w.InsertActive)
	for _, c := range chunks(w.UpdateActive, recordBytes) {
		a := newRecordArrays(c, false)
		batch.Queue(`UPDATE active a SET key_parts = u.key_parts, title = u.title, url = u.url, item = u.item, content_hash = u.content_hash,
				last_updated_at = u.last_updated_at, last_changed_at = u.last_changed_at, version = u.version, event_at = u.event_at, date_errors = u.date_errors,
				search_text = u.search_text, search_config = u.search_config, last_round = u.last_round, last_target = u.last_target
			FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::text[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[])
				AS u(id, key_parts, title, url, item, content_hash, last_updated_at, last_changed_at, version, event_at, date_errors, search_text, search_config, last_round, last_target)
			WHERE a.id = u.id`,
			a.id, a.keyParts, a.title, a.url, a.item, a.contentHash, a.lastUpdated, a.lastChanged, a.version, a.eventAt, a.dateErrors, a.searchText, a.searchConfig, a.lastRound, a.lastTarget)
	}
	queueTouch(batch, "active", w.TouchActive)
	for _, c := range chunks(w.UpdateArchive, recordBytes) {
		a := newRecordArrays(c, true)
		batch.Queue(`UPDATE archive a SET key_parts = u.key_parts, title = u.title, url = u.url, item = u.item, item_bytes = u.item_bytes, content_hash = u.content_hash,
				last_updated_at = u.last_updated_at, last_changed_at = u.last_changed_at, version = u.version, event_at = u.event_at, date_errors = u.date_errors,
				search_text = u.search_text, search_config = u.search_config, last_round = u.last_round, last_target = u.last_target
			FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::bigint[], $7::text[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[])
				AS u(id, key_parts, title, url, item, item_bytes, content_hash, last_updated_at, last_changed_at, version, event_at, date_errors, search_text, search_config, last_round, last_target)
			WHERE a.id = u.id`,
			a.id, a.keyParts, a.title, a.url, a.item, a.itemBytes, a.contentHash, a.lastUpdated, a.lastChanged, a.version, a.eventAt, a.dateErrors, a.searchText, a.searchConfig, a.lastRound, a.lastTarget)
	}
	queueTouch(batch, "archive", w.TouchArchive)
	for _, c := range chunks(w.History, func(h *crawlkeeper.HistoryEntry) int { return len(h.Item) }) {
		var (
			rid, ver, from, to = make([]int64, len(c)), make([]int64, len(c)), make([]int64, len(c)), make([]int64, len(c))
			items              = make([][]byte, len(c))
			hashes             = make([]string, len(c))
		)
		for i, h := range c {
			rid[i], ver[i], items[i], hashes[i] = h.RecordID, h.Version, h.Item, h.ContentHash
			from[i], to[i] = h.ValidFrom.UnixMicro(), h.ValidTo.UnixMicro()
		}
		batch.Queue(`INSERT INTO history (record_id, version, item, content_hash, valid_from, valid_to)
			SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bytea[], $4::text[], $5::bigint[], $6::bigint[])
			ON CONFLICT (record_id, version) DO UPDATE SET item = excluded.item, content_hash = excluded.content_hash,
				valid_from = excluded.valid_from, valid_to = excluded.valid_to`,
			rid, ver, items, hashes, from, to)
	}
	if len(w.TrimHistory) > 0 {
		rid, upTo := make([]int64, len(w.TrimHistory)), make([]int64, len(w.TrimHistory))
		for i, t := range w.TrimHistory {
			rid[i], upTo[i] = t.RecordID, t.UpTo
		}
		batch.Queue(`DELETE FROM history h USING unnest($1::bigint[], $2::bigint[]) AS t(record_id, up_to)
			WHERE h.record_id = t.record_id AND h.version <= t.up_to`, rid, upTo)
	}
	queueDeliveries(batch, w.Deliveries)
	if batch.Len() > 0 {
		if err := tx.SendBatch(ctx, batch).Close(); err != nil {
			return nil, fmt.Errorf("write: %w", err)
		}
	}
	return res, nil
}

// deliveryShards is how many counter rows each source's deliveries are
// spread over (see migrations/014_deliveries.sql).
const deliveryShards = 8

// queueDeliveries queues the batch's additions to the delivery counters,
// in source order (the order every ingest locks the rows in), on one
// shard picked at random.
func queueDeliveries(batch *pgx.Batch, ds []crawlkeeper.DeliveryCount) {
	if len(ds) == 0 {
		return
	}
	src, n, dup := make([]string, len(ds)), make([]int64, len(ds)), make([]int64, len(ds))
	for i, d := range ds {
		src[i], n[i], dup[i] = enc(d.Source), d.Deliveries, d.Duplicates
	}
	batch.Queue(`INSERT INTO deliveries (source, shard, deliveries, duplicates)
		SELECT s, $4, n, d FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS u(s, n, d) ORDER BY s COLLATE "C"
		ON CONFLICT (source, shard) DO UPDATE SET deliveries = deliveries.deliveries + excluded.deliveries, duplicates = deliveries.duplicates + excluded.duplicates`,
		src, n, dup, rand.IntN(deliveryShards))
}

// queueInsertActive queues multi-row inserts of full records into active.
func queueInsertActive(batch *pgx.Batch, recs []*crawlkeeper.Record) {
	for _, c := range chunks(recs, recordBytes) {
		a := newRecordArrays(c, false)
		batch.Queue(`INSERT INTO active (`+recordCols+`)
			SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bytea[], $8::text[], $9::bigint[],
				$10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[], $14::text[], $15::bigint[], $16::bigint[], $17::text[], $18::bytea[],
				$19::text[], $20::text[], $21::text[], $22::text[])`,
			a.args()...)
	}
}

// queueInsertArchive queues multi-row inserts of full records into the
// archive, payloads compressed, archived at and for the given reasons.
func queueInsertArchive(batch *pgx.Batch, recs []*crawlkeeper.Record, at time.Time, reasons []crawlkeeper.ArchiveReason) {
	off := 0
	for _, c := range chunks(recs, recordBytes) {
		a := newRecordArrays(c, true)
		ats, rs := make([]int64, len(c)), make([]string, len(c))
		for i := range c {
			ats[i], rs[i] = at.UnixMicro(), string(reasons[off+i])
		}
		off += len(c)
		batch.Queue(`INSERT INTO archive (`+archiveCols+`, item_bytes)
			SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bytea[], $8::text[], $9::bigint[],
				$10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[], $14::text[], $15::bigint[], $16::bigint[], $17::text[], $18::bytea[],
				$19::text[], $20::text[], $21::text[], $22::text[], $23::bigint[], $24::text[], $25::bigint[])`,
			append(a.args(), ats, rs, a.itemBytes)...)
	}
}

// queueTouch queues the update of an unchanged delivery: last_updated_at,
// event_at, date_errors, last_round and last_target.
func queueTouch(batch *pgx.Batch, table string, recs []*crawlkeeper.Record) {
	if len(recs) == 0 {
		return
	}
	id, updated := make([]int64, len(recs)), make([]int64, len(recs))
	event, dateErrors := make([]*int64, len(recs)), make([]*string, len(recs))
	round, target := make([]string, len(recs)), make([]string, len(recs))
	for i, r := range recs {
		id[i], updated[i] = r.ID, r.LastUpdatedAt.UnixMicro()
		event[i], dateErrors[i] = sqlstore.Micros(r.EventAt), sqlstore.DateErrorsText(r.DateErrors)
		round[i], target[i] = enc(r.LastRound), enc(r.LastTarget)
	}
	batch.Queue(`UPDATE `+table+` a SET last_updated_at = u.last_updated_at, event_at = u.event_at, date_errors = u.date_errors,
			last_round = u.last_round, last_target = u.last_target
		FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[]) AS u(id, last_updated_at, event_at, date_errors, last_round, last_target)
		WHERE a.id = u.id`, id, updated, event, dateErrors, round, target)
}

// recordArrays are the columns of several records, one array per column,
// for statements over unnest().
type recordArrays struct {
	id                                         []int64
	key, keyParts, source, title, url          []string
	item, derived                              [][]byte
	contentHash, chain                         []string
	crawled, lastUpdated, lastChanged, version []int64
	eventAt, processedAt                       []*int64
	dateErrors                                 []*string
	processedVersion, itemBytes                []int64
	searchText                                 []*string
	searchConfig                               []string
	lastRound, lastTarget                      []string
}

// newRecordArrays builds the column arrays of recs, for the archive table
// when archive is set. Items are stored as they are in either table:
// PostgreSQL compresses large values itself (see move.go).
func newRecordArrays(recs []*crawlkeeper.Record, archive bool) *recordArrays {
	n := len(recs)
	a := &recordArrays{
		id: make([]int64, n), key: make([]string, n), keyParts: make([]string, n), source: make([]string, n),
		title: make([]string, n), url: make([]string, n), item: make([][]byte, n), derived: make([][]byte, n),
		contentHash: make([]string, n), chain: make([]string, n), crawled: make([]int64, n), lastUpdated: make([]int64, n),
		lastChanged: make([]int64, n), version: make([]int64, n), eventAt: make([]*int64, n), processedAt: make([]*int64, n),
		dateErrors: make([]*string, n), processedVersion: make([]int64, n), itemBytes: make([]int64, n),
		searchText: make([]*string, n), searchConfig: make([]string, n),
		lastRound: make([]string, n), lastTarget: make([]string, n),
	}
	for i, r := range recs {
		a.id[i], a.key[i], a.keyParts[i], a.source[i] = r.ID, enc(r.Key), sqlstore.KeyPartsText(r.KeyParts), enc(r.Source)
		a.title[i], a.url[i], a.contentHash[i], a.chain[i] = enc(r.Title), enc(r.URL), r.ContentHash, enc(r.ProcessedChain)
		a.item[i], a.derived[i] = r.Item, sqlstore.Blob(r.Derived)
		if a.item[i] == nil {
			a.item[i] = []byte{}
		}
		a.itemBytes[i] = int64(len(r.Item))
		a.crawled[i], a.lastUpdated[i], a.lastChanged[i] = r.CrawledAt.UnixMicro(), r.LastUpdatedAt.UnixMicro(), r.LastChangedAt.UnixMicro()
		a.version[i], a.processedVersion[i] = r.Version, r.ProcessedVersion
		a.eventAt[i], a.processedAt[i] = sqlstore.Micros(r.EventAt), sqlstore.Micros(r.ProcessedAt)
		a.dateErrors[i] = sqlstore.DateErrorsText(r.DateErrors)
		a.searchText[i], a.searchConfig[i] = searchTextArg(r), searchConfig(r.SearchLanguage)
		a.lastRound[i], a.lastTarget[i] = enc(r.LastRound), enc(r.LastTarget)
	}
	return a
}

// args returns the arrays in recordCols order.
func (a *recordArrays) args() []any {
	return []any{a.id, a.key, a.keyParts, a.source, a.title, a.url, a.item, a.contentHash, a.crawled,
		a.lastUpdated, a.lastChanged, a.version, a.eventAt, a.dateErrors, a.processedAt, a.processedVersion,
		a.chain, a.derived, a.searchText, a.searchConfig, a.lastRound, a.lastTarget}
}

func recordBytes(r *crawlkeeper.Record) int {
	return len(r.Item) + len(r.Title) + len(r.URL) + len(r.Derived) + len(r.SearchText) + 256
}

// chunks splits xs into runs of at most maxStatementBytes by size, each
// holding at least one element.
func chunks[T any](xs []T, size func(T) int) [][]T {
	var out [][]T
	start, bytes := 0, 0
	for i, x := range xs {
		n := size(x)
		if i > start && bytes+n > maxStatementBytes {
			out = append(out, xs[start:i])
			start, bytes = i, 0
		}
		bytes += n
	}
	if start < len(xs) {
		out = append(out, xs[start:])
	}
	return out
}
