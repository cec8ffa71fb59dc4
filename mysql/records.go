package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
	"github.com/crawlkeeper/crawlkeeper/internal/zstd"
)

// recordCols are the columns shared by active and archive, in the order
// scanRecord reads them. search_text feeds the FULLTEXT index (see
// search.go); it travels with the record through every move, as do
// last_round and last_target (migration 015).
const recordCols = "id, `key`, key_parts, source, title, url, item, content_hash, crawled_at, last_updated_at, last_changed_at, version, event_at, date_errors, processed_at, processed_version, processed_chain, derived, search_text, last_round, last_target"

// archiveCols adds the archive-only columns.
const archiveCols = recordCols + `, archived_at, archive_reason`

// recordWidth is the number of recordCols.
const recordWidth = 21

type rowScanner interface {
	Scan(dest ...any) error
}

// queryer is what reads need from a pool or a transaction.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// scanRecord reads one row of recordCols (plus the archive columns when
// archived) into a Record, decompressing archived payloads.
func scanRecord(row rowScanner, archived bool) (*crawlkeeper.Record, error) {
	var (
		r                         crawlkeeper.Record
		keyParts                  string
		item, derived             []byte
		crawled, updated, changed int64
		eventAt, processedAt      sql.NullInt64
		dateErrors                sql.NullString
		archivedAt                int64
		reason                    string
		searchText                sql.NullString
	)
	dest := []any{&r.ID, &r.Key, &keyParts, &r.Source, &r.Title, &r.URL, &item, &r.ContentHash,
		&crawled, &updated, &changed, &r.Version, &eventAt, &dateErrors, &processedAt,
		&r.ProcessedVersion, &r.ProcessedChain, &derived, &searchText, &r.LastRound, &r.LastTarget}
	if archived {
		dest = append(dest, &archivedAt, &reason)
	}
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	var de *string
	if dateErrors.Valid {
		de = &dateErrors.String
	}
	if err := sqlstore.Decode(&r, keyParts, de); err != nil {
		return nil, err
	}
	if archived {
		raw, err := zstd.Decompress(nil, item)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", r.ID, err)
		}
		item = raw
		t := crawlkeeper.MicrosTime(archivedAt)
		r.ArchivedAt = &t
		r.ArchiveReason = crawlkeeper.ArchiveReason(reason)
	}
	if item == nil {
		item = []byte{}
	}
	r.Item = item
	r.SearchText = decodeSearchText(searchText.String)
	r.CrawledAt = crawlkeeper.MicrosTime(crawled)
	r.LastUpdatedAt = crawlkeeper.MicrosTime(updated)
	r.LastChangedAt = crawlkeeper.MicrosTime(changed)
	r.EventAt = nullTime(eventAt)
	r.ProcessedAt = nullTime(processedAt)
	if len(derived) > 0 {
		r.Derived = derived
	}
	return &r, nil
}

func nullTime(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	return sqlstore.Time(&v.Int64)
}

// queryRecords runs q and reads every row as a record.
func queryRecords(ctx context.Context, db queryer, archived bool, q string, args ...any) ([]*crawlkeeper.Record, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*crawlkeeper.Record{}
	for rows.Next() {
		r, err := scanRecord(rows, archived)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func notFound(what string) error {
	return crawlkeeper.Errorf(crawlkeeper.ENOTFOUND, "%s not found", what)
}

// getOne reads a record by a condition from active, then archive.
func (s *Store) getOne(ctx context.Context, where string, arg any, what string) (*crawlkeeper.Record, error) {
	r, err := scanRecord(s.db.QueryRowContext(ctx, `SELECT `+recordCols+` FROM active WHERE `+where, arg), false)
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, s.wrap("get "+what, err)
	}
	r, err = scanRecord(s.db.QueryRowContext(ctx, `SELECT `+archiveCols+` FROM archive WHERE `+where, arg), true)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(what)
	}
	if err != nil {
		return nil, s.wrap("get "+what, err)
	}
	return r, nil
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
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM active WHERE id = ?) + (SELECT count(*) FROM archive WHERE id = ?)`, id, id).Scan(&n)
	if err != nil {
		return nil, s.wrap(fmt.Sprintf("history of %d", id), err)
	}
	if n == 0 {
		return nil, notFound(fmt.Sprintf("record %d", id))
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+sqlstore.HistoryCols+` FROM history WHERE record_id = ? ORDER BY version`, id)
	if err != nil {
		return nil, s.wrap(fmt.Sprintf("history of %d", id), err)
	}
	defer rows.Close()
	out := []crawlkeeper.HistoryEntry{}
	err = sqlstore.ScanHistory(rows, func(h crawlkeeper.HistoryEntry) { out = append(out, h) })
	return out, s.wrap(fmt.Sprintf("history of %d", id), err)
}

// HistoryMany implements crawlkeeper.RecordStore, one query per chunk of
// ids.
func (s *Store) HistoryMany(ctx context.Context, ids []int64) (map[int64][]crawlkeeper.HistoryEntry, error) {
	out := map[int64][]crawlkeeper.HistoryEntry{}
	for len(ids) > 0 {
		n := min(len(ids), 1000)
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		ids = ids[n:]
		rows, err := s.db.QueryContext(ctx, `SELECT `+sqlstore.HistoryCols+` FROM history WHERE record_id IN (?`+strings.Repeat(",?", n-1)+`) ORDER BY record_id, version`, args...)
		if err != nil {
			return nil, s.wrap("history", err)
		}
		err = sqlstore.ScanHistory(rows, func(h crawlkeeper.HistoryEntry) { out[h.RecordID] = append(out[h.RecordID], h) })
		rows.Close()
		if err != nil {
			return nil, s.wrap("history", err)
		}
	}
	return out, nil
}

// List implements crawlkeeper.Store. Pages are keyset-paginated: the
// cursor holds the sort key of the last row, so deep pages cost the same as
// the first.
//
// The title search lower-cases both sides with LOWER(), which on MySQL and
// MariaDB folds non-ASCII letters too (the embedded store folds only
// ASCII): "É" finds "é" here.
func (s *Store) List(ctx context.Context, q crawlkeeper.RecordQuery) (*crawlkeeper.RecordPage, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	if limit > 10000 {
		limit = 10000
	}
	table, cols := "active", recordCols
	if q.Archived {
		table, cols = "archive", archiveCols
	}
	var where []string
	var args []any
	if q.FiltersSource() {
		where = append(where, "source = ?")
		args = append(args, q.Source)
	}
	if q.Q != "" {
		where = append(where, `LOWER(title) LIKE LOWER(?) ESCAPE '!'`)
		args = append(args, sqlstore.LikePattern(q.Q, '!'))
	}
	if q.Round != "" {
		where = append(where, "last_round = ?")
		args = append(args, q.Round)
	}
	if q.Target != "" {
		where = append(where, "last_target = ?")
		args = append(args, q.Target)
	}
	if !q.Since.IsZero() {
		where = append(where, "last_updated_at >= ?")
		args = append(args, q.Since.UnixMicro())
	}
	cur, err := crawlkeeper.DecodeCursor(q.Cursor, q.Order)
	if err != nil {
		return nil, err
	}
	order := "id"
	if q.Order == crawlkeeper.OrderNewest {
		order = "last_updated_at DESC, id DESC"
		if cur != nil {
			where = append(where, "(last_updated_at < ? OR (last_updated_at = ? AND id < ?))")
			args = append(args, cur.UpdatedMicros, cur.UpdatedMicros, cur.ID)
		}
	} else if cur != nil {
		where = append(where, "id > ?")
		args = append(args, cur.ID)
	}
	query := `SELECT ` + cols + ` FROM ` + table
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	query += ` ORDER BY ` + order + ` LIMIT ?`
	args = append(args, limit+1)
	recs, err := queryRecords(ctx, s.db, q.Archived, query, args...)
	if err != nil {
		return nil, s.wrap("list records", err)
	}
	page := &crawlkeeper.RecordPage{Records: recs}
	if len(page.Records) > limit {
		page.Records = page.Records[:limit]
		page.Next = crawlkeeper.EncodeCursor(page.Records[limit-1], q.Order)
	}
	return page, nil
}
