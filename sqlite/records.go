package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
	"github.com/crawlkeeper/crawlkeeper/internal/zstd"
)

// recordCols are the columns shared by active and archive, in the order
// scanRecord reads them. search_text is what the full-text index reads
// (see search.go); it travels with the record through every move, as do
// last_round and last_target (migration 015).
const recordCols = `id, key, key_parts, source, title, url, item, content_hash, crawled_at, last_updated_at, last_changed_at, version, event_at, date_errors, processed_at, processed_version, processed_chain, derived, search_text, last_round, last_target`

// archiveCols adds the archive-only columns.
const archiveCols = recordCols + `, archived_at, archive_reason`

type rowScanner interface {
	Scan(dest ...any) error
}

// scanRecord reads one row of recordCols (plus archive columns when
// archived) into a Record, decompressing archived payloads.
func scanRecord(row rowScanner, archived bool) (*crawlkeeper.Record, error) {
	var (
		r                         crawlkeeper.Record
		keyParts                  string
		item                      []byte
		crawled, updated, changed int64
		eventAt, processedAt      sql.NullInt64
		dateErrors                sql.NullString
		derived                   []byte
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
	if err := sqlstore.DecodeStrings(keyParts, &r.KeyParts); err != nil {
		return nil, fmt.Errorf("record %d: key_parts: %w", r.ID, err)
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
	r.Item = item
	r.SearchText = searchText.String
	r.CrawledAt = crawlkeeper.MicrosTime(crawled)
	r.LastUpdatedAt = crawlkeeper.MicrosTime(updated)
	r.LastChangedAt = crawlkeeper.MicrosTime(changed)
	r.EventAt = nullTime(eventAt)
	r.ProcessedAt = nullTime(processedAt)
	if dateErrors.Valid && dateErrors.String != "" {
		if err := sqlstore.DecodeStrings(dateErrors.String, &r.DateErrors); err != nil {
			return nil, fmt.Errorf("record %d: date_errors: %w", r.ID, err)
		}
	}
	if len(derived) > 0 {
		r.Derived = derived
	}
	return &r, nil
}

func nullTime(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := crawlkeeper.MicrosTime(v.Int64)
	return &t
}

func timeArg(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

func jsonStrings(xs []string) any {
	if len(xs) == 0 {
		return nil
	}
	b, _ := json.Marshal(xs)
	return string(b)
}

func keyPartsText(xs []string) string {
	if xs == nil {
		xs = []string{}
	}
	b, _ := json.Marshal(xs)
	return string(b)
}

func blobArg(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return []byte(b)
}

func notFound(what string) error {
	return crawlkeeper.Errorf(crawlkeeper.ENOTFOUND, "%s not found", what)
}

// getOne reads a record by a condition from active, then archive.
func (s *Store) getOne(ctx context.Context, db queryer, where string, arg any, what string) (*crawlkeeper.Record, error) {
	row := db.QueryRowContext(ctx, `SELECT `+recordCols+` FROM active WHERE `+where, arg)
	r, err := scanRecord(row, false)
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("get %s: %w", what, err)
	}
	row = db.QueryRowContext(ctx, `SELECT `+archiveCols+` FROM archive WHERE `+where, arg)
	r, err = scanRecord(row, true)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(what)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", what, err)
	}
	return r, nil
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Get implements crawlkeeper.Store.
func (s *Store) Get(ctx context.Context, id int64) (*crawlkeeper.Record, error) {
	return s.getOne(ctx, s.r, `id = ?`, id, fmt.Sprintf("record %d", id))
}

// GetByKey implements crawlkeeper.Store.
func (s *Store) GetByKey(ctx context.Context, key string) (*crawlkeeper.Record, error) {
	return s.getOne(ctx, s.r, `key = ?`, key, fmt.Sprintf("record with key %q", key))
}

// History implements crawlkeeper.Store.
func (s *Store) History(ctx context.Context, id int64) ([]crawlkeeper.HistoryEntry, error) {
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM active WHERE id = ?) + (SELECT count(*) FROM archive WHERE id = ?)`, id, id).Scan(&n)
	if err != nil {
		return nil, fmt.Errorf("history of %d: %w", id, err)
	}
	if n == 0 {
		return nil, notFound(fmt.Sprintf("record %d", id))
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+sqlstore.HistoryCols+` FROM history WHERE record_id = ? ORDER BY version`, id)
	if err != nil {
		return nil, fmt.Errorf("history of %d: %w", id, err)
	}
	defer rows.Close()
	out := []crawlkeeper.HistoryEntry{}
	err = sqlstore.ScanHistory(rows, func(h crawlkeeper.HistoryEntry) { out = append(out, h) })
	return out, err
}

// HistoryMany implements crawlkeeper.RecordStore.
func (s *Store) HistoryMany(ctx context.Context, ids []int64) (map[int64][]crawlkeeper.HistoryEntry, error) {
	out := map[int64][]crawlkeeper.HistoryEntry{}
	for len(ids) > 0 {
		n := min(len(ids), keyChunk)
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		ids = ids[n:]
		rows, err := s.r.QueryContext(ctx, `SELECT `+sqlstore.HistoryCols+` FROM history WHERE record_id IN (?`+strings.Repeat(",?", n-1)+`) ORDER BY record_id, version`, args...)
		if err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		err = sqlstore.ScanHistory(rows, func(h crawlkeeper.HistoryEntry) { out[h.RecordID] = append(out[h.RecordID], h) })
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
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
		where = append(where, `title LIKE ? ESCAPE '\'`)
		args = append(args, "%"+likeEscape(q.Q)+"%")
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
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list records: %w", err)
	}
	defer rows.Close()
	page := &crawlkeeper.RecordPage{Records: []*crawlkeeper.Record{}}
	for rows.Next() {
		r, err := scanRecord(rows, q.Archived)
		if err != nil {
			return nil, fmt.Errorf("list records: %w", err)
		}
		page.Records = append(page.Records, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list records: %w", err)
	}
	if len(page.Records) > limit {
		page.Records = page.Records[:limit]
		last := page.Records[limit-1]
		page.Next = crawlkeeper.EncodeCursor(last, q.Order)
	}
	return page, nil
}

func likeEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}
