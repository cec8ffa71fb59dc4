package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
	"github.com/crawlkeeper/crawlkeeper/internal/zstd"
)

// JSONText is a column that holds JSON (key_parts, date_errors). Engines
// that escape text (PostgreSQL's NUL escape) leave it as it is: JSON
// escapes control characters itself.
type JSONText string

// SearchScan holds a row's search columns as scanned: the search text
// (NULL in narrow reads) and, where the engine keeps one, its language.
type SearchScan struct {
	Text     sql.NullString
	Language string
}

// Columns is what an engine stores of a record besides the common
// columns: the full-text search columns and how archived payloads are
// kept.
type Columns interface {
	// SearchCols names the engine's search columns, in the place of
	// search_text among the record columns; search_text comes first.
	SearchCols() string
	// SearchArgs returns the values of SearchCols for r.
	SearchArgs(r *crawlkeeper.Record) []any
	// SearchDest appends to dest where a row's SearchCols are scanned
	// to, in v.
	SearchDest(dest []any, v *SearchScan) []any
	// SearchRead moves what SearchDest scanned into r.
	SearchRead(v *SearchScan, r *crawlkeeper.Record)
	// CompressArchive reports whether archived payloads are stored
	// compressed with zstd (SQLite, MySQL) rather than left to the
	// engine (PostgreSQL compresses large values itself).
	CompressArchive() bool
}

// recordCols returns the columns shared by active and archive, in the
// order scanRecord reads them.
func (s *Store) recordCols() string {
	return "id, `key`, key_parts, source, title, url, item, content_hash, crawled_at, last_updated_at, last_changed_at, version, " +
		"event_at, date_errors, processed_at, processed_version, processed_chain, derived, " + s.e.SearchCols() + ", last_round, last_target, " + fetchCols
}

// fetchCols hold the record's FetchCounts; NULL for records stored before
// they were counted.
const fetchCols = "fetch_refetches, fetch_changes, fetch_changed_us, fetch_unchanged_us, fetch_changed_log"

// RecordCols returns the columns of a record shared by active and
// archive, for statements an engine writes itself.
func (s *Store) RecordCols() string { return s.activeCols }

// cols returns the columns of table's records: with the archive's own at
// the end for the archive.
func (s *Store) cols(archived bool) string {
	if archived {
		return s.archiveCols
	}
	return s.activeCols
}

// narrowCols are the active columns without what an ingest of a re-crawl
// does not need (key_parts, the payload, derived results, search text):
// most deliveries repeat what is stored, and reading payloads nobody uses
// would dominate them. The records whose content changes are read again
// for their payload (loadByKeys).
func (s *Store) narrowCols() string {
	search := Split(s.e.SearchCols())
	search[0] = "NULL"
	return "id, `key`, '[]', source, title, url, NULL, content_hash, crawled_at, last_updated_at, last_changed_at, version, " +
		"event_at, date_errors, processed_at, processed_version, processed_chain, NULL, " + strings.Join(search, ", ") + ", last_round, last_target, " + fetchCols
}

// table returns the name of the table of active or archived records.
func table(archived bool) string {
	if archived {
		return "archive"
	}
	return "active"
}

// recordRow holds the columns of one row that scanRecord converts before
// they go into a Record. A query's rows share one: each variable whose
// address goes into a Scan's destinations would otherwise be a heap
// allocation of its own, for every row.
type recordRow struct {
	keyParts                  JSONText
	dateErrors                sql.NullString
	item, derived             []byte
	crawled, updated, changed int64
	eventAt, processedAt      sql.NullInt64
	archivedAt                int64
	reason                    string
	search                    SearchScan
	fetches                   [4]sql.NullInt64
	changedLog                sql.NullFloat64
	dest                      [40]any
}

// scanRecord reads one row of cols(archived) into a Record, followed by
// extra columns, decompressing archived payloads. v holds the row on its
// way.
func (s *Store) scanRecord(row Row, archived bool, v *recordRow, extra ...any) (*crawlkeeper.Record, error) {
	r := new(crawlkeeper.Record)
	dest := append(v.dest[:0], &r.ID, &r.Key, &v.keyParts, &r.Source, &r.Title, &r.URL, &v.item, &r.ContentHash,
		&v.crawled, &v.updated, &v.changed, &r.Version, &v.eventAt, &v.dateErrors, &v.processedAt,
		&r.ProcessedVersion, &r.ProcessedChain, &v.derived)
	dest = s.e.SearchDest(dest, &v.search)
	dest = append(dest, &r.LastRound, &r.LastTarget, &v.fetches[0], &v.fetches[1], &v.fetches[2], &v.fetches[3], &v.changedLog)
	if archived {
		dest = append(dest, &v.archivedAt, &v.reason)
	}
	if err := row.Scan(append(dest, extra...)...); err != nil {
		return nil, err
	}
	s.e.SearchRead(&v.search, r)
	if err := DecodeStrings(string(v.keyParts), &r.KeyParts); err != nil {
		return nil, fmt.Errorf("record %d: key_parts: %w", r.ID, err)
	}
	if v.dateErrors.Valid && v.dateErrors.String != "" {
		if err := DecodeStrings(v.dateErrors.String, &r.DateErrors); err != nil {
			return nil, fmt.Errorf("record %d: date_errors: %w", r.ID, err)
		}
	}
	item := v.item
	if archived {
		raw, err := zstd.Decompress(nil, item)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", r.ID, err)
		}
		item = raw
		t := crawlkeeper.MicrosTime(v.archivedAt)
		r.ArchivedAt = &t
		r.ArchiveReason = crawlkeeper.ArchiveReason(v.reason)
	}
	if item == nil {
		item = []byte{}
	}
	r.Item = item
	r.CrawledAt = crawlkeeper.MicrosTime(v.crawled)
	r.LastUpdatedAt = crawlkeeper.MicrosTime(v.updated)
	r.LastChangedAt = crawlkeeper.MicrosTime(v.changed)
	r.EventAt = NullTime(v.eventAt)
	r.ProcessedAt = NullTime(v.processedAt)
	if len(v.derived) > 0 {
		r.Derived = v.derived
	}
	r.Fetches = fetchCounts(&v.fetches, v.changedLog)
	return r, nil
}

// queryRecords runs a query over cols(archived) and reads every row.
func (s *Store) queryRecords(ctx context.Context, q Querier, archived bool, query string, args ...any) ([]*crawlkeeper.Record, error) {
	out := []*crawlkeeper.Record{}
	var v recordRow
	err := EachRow(ctx, q, func(rows Rows) error {
		r, err := s.scanRecord(rows, archived, &v)
		if err == nil {
			out = append(out, r)
		}
		return err
	}, query, args...)
	return out, err
}

// recordArgs returns the values of recordCols for r, its payload as
// given.
func (s *Store) recordArgs(r *crawlkeeper.Record, item []byte) []any {
	if item == nil {
		item = []byte{}
	}
	args := make([]any, 0, 24)
	args = append(args, r.ID, r.Key, KeyParts(r.KeyParts), r.Source, r.Title, r.URL, item, r.ContentHash,
		r.CrawledAt.UnixMicro(), r.LastUpdatedAt.UnixMicro(), r.LastChangedAt.UnixMicro(), r.Version,
		storeenc.Micros(r.EventAt), DateErrors(r.DateErrors), storeenc.Micros(r.ProcessedAt), r.ProcessedVersion,
		r.ProcessedChain, storeenc.Blob(r.Derived))
	args = append(args, s.e.SearchArgs(r)...)
	return append(append(args, r.LastRound, r.LastTarget), fetchArgs(r)...)
}

// fetchArgs returns the values of fetchCols for r.
func fetchArgs(r *crawlkeeper.Record) []any {
	f := r.Fetches
	if f == nil {
		return []any{(*int64)(nil), (*int64)(nil), (*int64)(nil), (*int64)(nil), (*float64)(nil)}
	}
	return []any{&f.Refetches, &f.Changes, &f.ChangedUS, &f.UnchangedUS, &f.ChangedLog}
}

// archivePayload returns r's payload as the archive stores it.
func (s *Store) archivePayload(item []byte) []byte {
	if s.e.CompressArchive() {
		return zstd.Compress(nil, item)
	}
	return item
}

// KeyParts encodes key_parts; a nil slice is stored as [].
func KeyParts(xs []string) JSONText { return JSONText(storeenc.KeyPartsText(xs)) }

// DateErrors encodes date_errors; none is NULL.
func DateErrors(xs []string) *JSONText { return (*JSONText)(storeenc.DateErrorsText(xs)) }

func notFound(what string) error {
	return crawlkeeper.Errorf(crawlkeeper.ENOTFOUND, "%s not found", what)
}

// getOne reads a record by a condition from active, then archive.
func (s *Store) getOne(ctx context.Context, where string, arg any, what string) (*crawlkeeper.Record, error) {
	for _, archived := range []bool{false, true} {
		r, err := s.scanRecord(s.e.Reader().QueryRow(ctx, `SELECT `+s.cols(archived)+` FROM `+table(archived)+` WHERE `+where, arg), archived, new(recordRow))
		if err == nil {
			return r, nil
		}
		if !NoRows(err) {
			return nil, s.e.Wrap("get "+what, err)
		}
	}
	return nil, notFound(what)
}

// Get implements crawlkeeper.Store.
func (s *Store) Get(ctx context.Context, id int64) (*crawlkeeper.Record, error) {
	return s.getOne(ctx, `id = ?`, id, fmt.Sprintf("record %d", id))
}

// GetByKey implements crawlkeeper.Store.
func (s *Store) GetByKey(ctx context.Context, key string) (*crawlkeeper.Record, error) {
	return s.getOne(ctx, "`key` = ?", key, fmt.Sprintf("record with key %q", key))
}

// History implements crawlkeeper.Store.
func (s *Store) History(ctx context.Context, id int64) ([]crawlkeeper.HistoryEntry, error) {
	what := fmt.Sprintf("history of %d", id)
	var n int64
	err := s.e.Reader().QueryRow(ctx, `SELECT (SELECT count(*) FROM active WHERE id = ?) + (SELECT count(*) FROM archive WHERE id = ?)`, id, id).Scan(&n)
	if err != nil {
		return nil, s.e.Wrap(what, err)
	}
	if n == 0 {
		return nil, notFound(fmt.Sprintf("record %d", id))
	}
	out := []crawlkeeper.HistoryEntry{}
	rows, err := s.e.Reader().Query(ctx, `SELECT `+HistoryCols+` FROM history WHERE record_id = ? ORDER BY version`, id)
	if err == nil {
		defer rows.Close()
		err = ScanHistory(rows, func(h crawlkeeper.HistoryEntry) { out = append(out, h) })
	}
	if err != nil {
		return nil, s.e.Wrap(what, err)
	}
	return out, nil
}

// HistoryMany implements crawlkeeper.RecordStore, one query per chunk of
// ids.
func (s *Store) HistoryMany(ctx context.Context, ids []int64) (map[int64][]crawlkeeper.HistoryEntry, error) {
	out := map[int64][]crawlkeeper.HistoryEntry{}
	err := Chunks(ids, func(c []int64) error {
		rows, err := s.e.Reader().Query(ctx, `SELECT `+HistoryCols+` FROM history WHERE record_id IN (`+In(len(c))+`) ORDER BY record_id, version`, Args(c)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		return ScanHistory(rows, func(h crawlkeeper.HistoryEntry) { out[h.RecordID] = append(out[h.RecordID], h) })
	})
	if err != nil {
		return nil, s.e.Wrap("history", err)
	}
	return out, nil
}

// List implements crawlkeeper.Store. Pages are keyset-paginated: the
// cursor holds the sort key of the last row, so deep pages cost the same as
// the first.
func (s *Store) List(ctx context.Context, q crawlkeeper.RecordQuery) (*crawlkeeper.RecordPage, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 10000)
	var f conds
	if q.FiltersSource() {
		f.add("source = ?", q.Source)
	}
	if q.Q != "" {
		cond, esc := s.e.TitleMatch()
		f.add(cond, LikePattern(q.Q, esc))
	}
	if q.Round != "" {
		f.add("last_round = ?", q.Round)
	}
	if q.Target != "" {
		f.add("last_target = ?", q.Target)
	}
	if !q.Since.IsZero() {
		f.add("last_updated_at >= ?", q.Since.UnixMicro())
	}
	cur, err := crawlkeeper.DecodeCursor(q.Cursor, q.Order)
	if err != nil {
		return nil, err
	}
	order := "id"
	if q.Order == crawlkeeper.OrderNewest {
		order = "last_updated_at DESC, id DESC"
		if cur != nil {
			f.add("(last_updated_at < ? OR (last_updated_at = ? AND id < ?))", cur.UpdatedMicros, cur.UpdatedMicros, cur.ID)
		}
	} else if cur != nil {
		f.add("id > ?", cur.ID)
	}
	query := `SELECT ` + s.cols(q.Archived) + ` FROM ` + table(q.Archived)
	if len(f.where) > 0 {
		query += ` WHERE ` + strings.Join(f.where, " AND ")
	}
	query += ` ORDER BY ` + order + ` LIMIT ?`
	recs, err := s.queryRecords(ctx, s.e.Reader(), q.Archived, query, append(f.args, limit+1)...)
	if err != nil {
		return nil, s.e.Wrap("list records", err)
	}
	page := &crawlkeeper.RecordPage{Records: recs}
	if len(recs) > limit {
		page.Records = recs[:limit]
		page.Next = crawlkeeper.EncodeCursor(recs[limit-1], q.Order)
	}
	return page, nil
}

// conds gathers the conditions of a WHERE clause and their arguments.
type conds struct {
	where []string
	args  []any
}

func (c *conds) add(cond string, args ...any) {
	c.where = append(c.where, cond)
	c.args = append(c.args, args...)
}

// TitleMatcher is how an engine finds a text in titles, case-insensitively
// for ASCII letters at least.
type TitleMatcher interface {
	// TitleMatch returns the condition, with one placeholder for the
	// LIKE pattern, and the pattern's escape character (LikePattern).
	TitleMatch() (cond string, esc byte)
}

// Stats implements crawlkeeper.Store.
func (s *Store) Stats(ctx context.Context) (*crawlkeeper.Stats, error) {
	st := &crawlkeeper.Stats{Sources: map[string]*crawlkeeper.SourceStats{}}
	r := s.e.Reader()
	// The active table is counted through its source index alone; its
	// date errors come from the counters every write keeps (counting
	// date_errors would read every row: a second on 100,000 records).
	err := EachRow(ctx, r, func(rows Rows) error {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return err
		}
		sourceStats(st.Sources, name).Active = n
		st.Active += n
		return nil
	}, `SELECT source, count(*) FROM active GROUP BY source`)
	if err == nil {
		var des map[string]int64
		if des, err = s.ActiveDateErrors(ctx); err == nil {
			for name, de := range des {
				if ss := st.Sources[name]; ss != nil {
					ss.ActiveDateErrors = de
					ss.DateErrors += de
					st.DateErrors += de
				}
			}
		}
	}
	if err == nil {
		err = EachRow(ctx, r, func(rows Rows) error {
			var name, reason string
			var n, de, raw, stored int64
			if err := rows.Scan(&name, &reason, &n, &de, &raw, &stored); err != nil {
				return err
			}
			ss := sourceStats(st.Sources, name)
			ss.Archived += n
			ss.DateErrors += de
			if ss.ArchivedByReason == nil {
				ss.ArchivedByReason = map[crawlkeeper.ArchiveReason]int64{}
			}
			ss.ArchivedByReason[crawlkeeper.ArchiveReason(reason)] += n
			st.Archived += n
			st.DateErrors += de
			st.ArchiveRawBytes += raw
			st.ArchiveStoredBytes += stored
			return nil
		}, `SELECT source, archive_reason, count(*), count(date_errors), `+s.e.SumInt("item_bytes")+`, `+
			s.e.SumInt(s.e.StoredBytes("item"))+` FROM archive GROUP BY source, archive_reason`)
	}
	if err == nil {
		err = r.QueryRow(ctx, `SELECT count(*) FROM history`).Scan(&st.History)
	}
	var counts []crawlkeeper.DeliveryCount
	if err == nil {
		err = EachRow(ctx, r, func(rows Rows) error {
			var c crawlkeeper.DeliveryCount
			err := rows.Scan(&c.Source, &c.Deliveries, &c.Duplicates)
			counts = append(counts, c)
			return err
		}, `SELECT source, `+s.e.SumInt("deliveries")+`, `+s.e.SumInt("duplicates")+` FROM deliveries GROUP BY source`)
	}
	if err != nil {
		return nil, s.e.Wrap("stats", err)
	}
	st.AddDeliveries(counts)
	return st, nil
}

// sourceStats returns the entry of name in m, adding an empty one.
func sourceStats(m map[string]*crawlkeeper.SourceStats, name string) *crawlkeeper.SourceStats {
	if m[name] == nil {
		m[name] = &crawlkeeper.SourceStats{}
	}
	return m[name]
}

// Aggregates are an engine's spellings of aggregate expressions.
type Aggregates interface {
	// SumInt returns the sum of an integer expression as a 64-bit
	// integer, 0 over no rows.
	SumInt(expr string) string
	// StoredBytes returns the bytes a stored value of a column takes.
	StoredBytes(col string) string
	// Greatest names the two-argument maximum (max on SQLite, GREATEST
	// elsewhere).
	Greatest() string
}
