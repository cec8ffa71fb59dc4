package mysql

import (
	"context"
	"database/sql"
	"fmt"
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
