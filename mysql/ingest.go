package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
	"github.com/crawlkeeper/crawlkeeper/internal/zstd"
)

// recordArgs returns the values of recordCols for r, with item as given.
func recordArgs(r *crawlkeeper.Record, item []byte) []any {
	if item == nil {
		item = []byte{}
	}
	return []any{r.ID, r.Key, sqlstore.KeyPartsText(r.KeyParts), r.Source, r.Title, r.URL, item, r.ContentHash,
		r.CrawledAt.UnixMicro(), r.LastUpdatedAt.UnixMicro(), r.LastChangedAt.UnixMicro(), r.Version,
		sqlstore.Micros(r.EventAt), sqlstore.DateErrorsText(r.DateErrors), sqlstore.Micros(r.ProcessedAt),
		r.ProcessedVersion, r.ProcessedChain, sqlstore.Blob(r.Derived), encodeSearchText(r.SearchText),
		r.LastRound, r.LastTarget}
}

// rowBytes estimates a record's share of a statement: binary values may
// double when escaped.
func rowBytes(r *crawlkeeper.Record) int {
	return 2*(len(r.Item)+len(r.Derived)) + len(r.Title) + len(r.URL) + 4*len(r.KeyParts) + 2*len(r.SearchText) + 2*(len(r.LastRound)+len(r.LastTarget)) + 512
}

func (s *Store) insertActive(ctx context.Context, tx *sql.Tx, recs []*crawlkeeper.Record) error {
	for _, c := range chunks(recs, s.maxStatement, rowBytes) {
		args := make([]any, 0, len(c)*recordWidth)
		for _, r := range c {
			args = append(args, recordArgs(r, r.Item)...)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO active (`+recordCols+`) VALUES `+tuples(len(c), recordWidth), args...); err != nil {
			return fmt.Errorf("insert active: %w", err)
		}
	}
	return nil
}

// insertArchive writes recs to the archive with their payloads
// compressed, archived at the time and for the reasons given.
func (s *Store) insertArchive(ctx context.Context, tx *sql.Tx, recs []*crawlkeeper.Record, at time.Time, reasons []crawlkeeper.ArchiveReason) error {
	off := 0
	for _, c := range chunks(recs, s.maxStatement, rowBytes) {
		args := make([]any, 0, len(c)*(recordWidth+3))
		for i, r := range c {
			args = append(args, recordArgs(r, zstd.Compress(nil, r.Item))...)
			args = append(args, at.UnixMicro(), string(reasons[off+i]), len(r.Item))
		}
		off += len(c)
		if _, err := tx.ExecContext(ctx, `INSERT INTO archive (`+archiveCols+`, item_bytes) VALUES `+tuples(len(c), recordWidth+3), args...); err != nil {
			return fmt.Errorf("insert archive: %w", err)
		}
	}
	return nil
}

// update writes the columns an ingest changes when the content changed.
func (s *Store) update(ctx context.Context, tx *sql.Tx, table string, recs []*crawlkeeper.Record, archive bool) error {
	cols := []string{"id", "key_parts", "title", "url", "item", "content_hash", "last_updated_at", "last_changed_at", "version", "event_at", "date_errors", "search_text", "last_round", "last_target"}
	set := `t.key_parts = u.key_parts, t.title = u.title, t.url = u.url, t.item = u.item, t.content_hash = u.content_hash,
		t.last_updated_at = u.last_updated_at, t.last_changed_at = u.last_changed_at, t.version = u.version, t.event_at = u.event_at, t.date_errors = u.date_errors,
		t.search_text = u.search_text, t.last_round = u.last_round, t.last_target = u.last_target`
	if archive {
		cols = append(cols, "item_bytes")
		set += `, t.item_bytes = u.item_bytes`
	}
	for _, c := range chunks(recs, s.maxStatement, rowBytes) {
		args := make([]any, 0, len(c)*len(cols))
		for _, r := range c {
			item := []byte(r.Item)
			if archive {
				item = zstd.Compress(nil, r.Item)
			}
			args = append(args, r.ID, sqlstore.KeyPartsText(r.KeyParts), r.Title, r.URL, item, r.ContentHash,
				r.LastUpdatedAt.UnixMicro(), r.LastChangedAt.UnixMicro(), r.Version, sqlstore.Micros(r.EventAt),
				sqlstore.DateErrorsText(r.DateErrors), encodeSearchText(r.SearchText), r.LastRound, r.LastTarget)
			if archive {
				args = append(args, len(r.Item))
			}
		}
		q := `UPDATE ` + table + ` t JOIN ` + derived(cols, len(c)) + ` u ON t.id = u.id SET ` + set
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("update %s: %w", table, err)
		}
	}
	return nil
}

func (s *Store) touch(ctx context.Context, tx *sql.Tx, table string, recs []*crawlkeeper.Record, state map[string]*crawlkeeper.Record) error {
	// A record whose event fields and target are as stored needs only its
	// last_updated_at and last_round: those are one narrow UPDATE by id
	// per (timestamp, round), in a batch usually one, and the rest go
	// through a derived table.
	type group struct {
		at    int64
		round string
	}
	var full []*crawlkeeper.Record
	plain := map[group][]int64{}
	var order []group
	for _, r := range recs {
		if old := state[r.Key]; old != nil && sameEvent(old, r) && old.LastTarget == r.LastTarget {
			g := group{r.LastUpdatedAt.UnixMicro(), r.LastRound}
			if plain[g] == nil {
				order = append(order, g)
			}
			plain[g] = append(plain[g], r.ID)
			continue
		}
		full = append(full, r)
	}
	for _, g := range order {
		for _, c := range chunks(plain[g], s.maxStatement, func(int64) int { return 24 }) {
			args := append([]any{g.at, g.round}, int64s(c)...)
			if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET last_updated_at = ?, last_round = ? WHERE id IN (`+list(len(c))+`)`, args...); err != nil {
				return fmt.Errorf("touch %s: %w", table, err)
			}
		}
	}
	cols := []string{"id", "last_updated_at", "event_at", "date_errors", "last_round", "last_target"}
	size := func(r *crawlkeeper.Record) int {
		return 64 + 4*len(r.DateErrors)*32 + 2*(len(r.LastRound)+len(r.LastTarget))
	}
	for _, c := range chunks(full, s.maxStatement, size) {
		args := make([]any, 0, len(c)*len(cols))
		for _, r := range c {
			args = append(args, r.ID, r.LastUpdatedAt.UnixMicro(), sqlstore.Micros(r.EventAt), sqlstore.DateErrorsText(r.DateErrors), r.LastRound, r.LastTarget)
		}
		q := `UPDATE ` + table + ` t JOIN ` + derived(cols, len(c)) + ` u ON t.id = u.id
			SET t.last_updated_at = u.last_updated_at, t.event_at = u.event_at, t.date_errors = u.date_errors,
				t.last_round = u.last_round, t.last_target = u.last_target`
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("touch %s: %w", table, err)
		}
	}
	return nil
}

// sameEvent reports whether next's event fields are stored as old's.
func sameEvent(old, next *crawlkeeper.Record) bool {
	a, b := sqlstore.Micros(old.EventAt), sqlstore.Micros(next.EventAt)
	return (a == nil) == (b == nil) && (a == nil || *a == *b) && slices.Equal(old.DateErrors, next.DateErrors)
}

// writeHistory keeps previous versions, replacing rows with the same
// (record_id, version), and trims versions beyond the limit.
func (s *Store) writeHistory(ctx context.Context, tx *sql.Tx, hist []*crawlkeeper.HistoryEntry, trims []crawlkeeper.HistoryTrim) error {
	for _, c := range chunks(hist, s.maxStatement, func(h *crawlkeeper.HistoryEntry) int { return 2*len(h.Item) + 128 }) {
		args := make([]any, 0, len(c)*6)
		for _, h := range c {
			args = append(args, h.RecordID, h.Version, []byte(h.Item), h.ContentHash, h.ValidFrom.UnixMicro(), h.ValidTo.UnixMicro())
		}
		if _, err := tx.ExecContext(ctx, `REPLACE INTO history (record_id, version, item, content_hash, valid_from, valid_to) VALUES `+tuples(len(c), 6), args...); err != nil {
			return fmt.Errorf("history: %w", err)
		}
	}
	for _, c := range chunks(trims, s.maxStatement, func(crawlkeeper.HistoryTrim) int { return 64 }) {
		args := make([]any, 0, 2*len(c))
		for _, t := range c {
			args = append(args, t.RecordID, t.UpTo)
		}
		q := `DELETE h FROM history h JOIN ` + derived([]string{"record_id", "up_to"}, len(c)) + ` t ON h.record_id = t.record_id WHERE h.version <= t.up_to`
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("trim history: %w", err)
		}
	}
	return nil
}
