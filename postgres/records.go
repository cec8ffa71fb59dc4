package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
	"github.com/crawlkeeper/crawlkeeper/internal/zstd"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// recordCols are the columns shared by active and archive, in the order
// scanRecord reads them. search_text and search_config feed the generated
// search_tsv column and its GIN index (see search.go); they travel with
// the record through every move.
const recordCols = `id, key, key_parts, source, title, url, item, content_hash, crawled_at, last_updated_at, last_changed_at, version, event_at, date_errors, processed_at, processed_version, processed_chain, derived, search_text, search_config, last_round, last_target`

// archiveCols adds the archive-only columns.
const archiveCols = recordCols + `, archived_at, archive_reason`

// querier is what reads need from a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// scanRecord reads one row of recordCols (plus the archive columns when
// archived) into a Record, decompressing archived payloads.
func scanRecord(row pgx.Row, archived bool) (*crawlkeeper.Record, error) {
	var (
		r                         crawlkeeper.Record
		key, source, title, url   string
		keyParts, chain           string
		item, derived             []byte
		crawled, updated, changed int64
		eventAt, processedAt      *int64
		dateErrors                *string
		archivedAt                int64
		reason                    string
		searchText                *string
		round, target             string
	)
	dest := []any{&r.ID, &key, &keyParts, &source, &title, &url, &item, &r.ContentHash,
		&crawled, &updated, &changed, &r.Version, &eventAt, &dateErrors, &processedAt,
		&r.ProcessedVersion, &chain, &derived, &searchText, &r.SearchLanguage, &round, &target}
	if archived {
		dest = append(dest, &archivedAt, &reason)
	}
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	r.Key, r.Source, r.Title, r.URL, r.ProcessedChain = dec(key), dec(source), dec(title), dec(url), dec(chain)
	r.LastRound, r.LastTarget = dec(round), dec(target)
	if err := sqlstore.Decode(&r, keyParts, dateErrors); err != nil {
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
	r.Item = item
	if searchText != nil {
		r.SearchText = *searchText
	}
	r.CrawledAt = crawlkeeper.MicrosTime(crawled)
	r.LastUpdatedAt = crawlkeeper.MicrosTime(updated)
	r.LastChangedAt = crawlkeeper.MicrosTime(changed)
	r.EventAt = sqlstore.Time(eventAt)
	r.ProcessedAt = sqlstore.Time(processedAt)
	if len(derived) > 0 {
		r.Derived = derived
	}
	return &r, nil
}

// queryRecords runs q and reads every row as a record.
func queryRecords(ctx context.Context, db querier, archived bool, q string, args ...any) ([]*crawlkeeper.Record, error) {
	rows, err := db.Query(ctx, q, args...)
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
	r, err := scanRecord(s.pool.QueryRow(ctx, `SELECT `+recordCols+` FROM active WHERE `+where, arg), false)
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, s.wrap("get "+what, err)
	}
	r, err = scanRecord(s.pool.QueryRow(ctx, `SELECT `+archiveCols+` FROM archive WHERE `+where, arg), true)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(what)
	}
	if err != nil {
		return nil, s.wrap("get "+what, err)
	}
	return r, nil
}

// Get implements crawlkeeper.Store.
func (s *Store) Get(ctx context.Context, id int64) (*crawlkeeper.Record, error) {
	return s.getOne(ctx, `id = $1`, id, fmt.Sprintf("record %d", id))
}

// GetByKey implements crawlkeeper.Store.
func (s *Store) GetByKey(ctx context.Context, key string) (*crawlkeeper.Record, error) {
	return s.getOne(ctx, `key = $1`, enc(key), fmt.Sprintf("record with key %q", key))
}

// History implements crawlkeeper.Store.
func (s *Store) History(ctx context.Context, id int64) ([]crawlkeeper.HistoryEntry, error) {
	var exists bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM active WHERE id = $1) OR EXISTS (SELECT 1 FROM archive WHERE id = $1)`, id).Scan(&exists)
	if err != nil {
		return nil, s.wrap(fmt.Sprintf("history of %d", id), err)
	}
	if !exists {
		return nil, notFound(fmt.Sprintf("record %d", id))
	}
	rows, err := s.pool.Query(ctx, `SELECT `+sqlstore.HistoryCols+` FROM history WHERE record_id = $1 ORDER BY version`, id)
	if err != nil {
		return nil, s.wrap(fmt.Sprintf("history of %d", id), err)
	}
	defer rows.Close()
	out := []crawlkeeper.HistoryEntry{}
	err = sqlstore.ScanHistory(rows, func(h crawlkeeper.HistoryEntry) { out = append(out, h) })
	return out, s.wrap(fmt.Sprintf("history of %d", id), err)
}

// HistoryMany implements crawlkeeper.RecordStore with one query.
func (s *Store) HistoryMany(ctx context.Context, ids []int64) (map[int64][]crawlkeeper.HistoryEntry, error) {
	out := map[int64][]crawlkeeper.HistoryEntry{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+sqlstore.HistoryCols+` FROM history WHERE record_id = ANY($1) ORDER BY record_id, version`, ids)
	if err != nil {
		return nil, s.wrap("history", err)
	}
	defer rows.Close()
	err = sqlstore.ScanHistory(rows, func(h crawlkeeper.HistoryEntry) { out[h.RecordID] = append(out[h.RecordID], h) })
	return out, s.wrap("history", err)
}

// foldTitle lower-cases the ASCII letters of the title column and nothing
// else, the case folding of the embedded store's LIKE.
const foldTitle = `translate(title, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')`

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
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if q.FiltersSource() {
		where = append(where, "source = "+arg(enc(q.Source)))
	}
	if q.Q != "" {
		where = append(where, foldTitle+` LIKE `+arg(enc(sqlstore.LikePattern(q.Q, '\\')))+` ESCAPE '\'`)
	}
	if q.Round != "" {
		where = append(where, "last_round = "+arg(enc(q.Round)))
	}
	if q.Target != "" {
		where = append(where, "last_target = "+arg(enc(q.Target)))
	}
	if !q.Since.IsZero() {
		where = append(where, "last_updated_at >= "+arg(q.Since.UnixMicro()))
	}
	cur, err := crawlkeeper.DecodeCursor(q.Cursor, q.Order)
	if err != nil {
		return nil, err
	}
	order := "id"
	if q.Order == crawlkeeper.OrderNewest {
		order = "last_updated_at DESC, id DESC"
		if cur != nil {
			where = append(where, "(last_updated_at, id) < ("+arg(cur.UpdatedMicros)+", "+arg(cur.ID)+")")
		}
	} else if cur != nil {
		where = append(where, "id > "+arg(cur.ID))
	}
	query := `SELECT ` + cols + ` FROM ` + table
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	query += ` ORDER BY ` + order + ` LIMIT ` + arg(limit+1)
	recs, err := queryRecords(ctx, s.pool, q.Archived, query, args...)
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
