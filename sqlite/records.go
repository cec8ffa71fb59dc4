package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
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

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}
