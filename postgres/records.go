package postgres

import (
	"context"
	"fmt"

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
