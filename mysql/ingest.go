package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
	"github.com/crawlkeeper/crawlkeeper/internal/zstd"
)

// Ingest implements crawlkeeper.Store: the whole batch is one transaction.
// The keys are locked, their records read with a few IN (...) queries, the
// domain's Merge decides each item (crawlkeeper.PlanIngest), and each kind
// of write is one multi-row statement.
func (s *Store) Ingest(ctx context.Context, b *crawlkeeper.IngestBatch) (*crawlkeeper.IngestResult, error) {
	if len(b.Items) == 0 {
		return &crawlkeeper.IngestResult{Outcomes: []crawlkeeper.Outcome{}, IDs: []int64{}}, nil
	}
	var res *crawlkeeper.IngestResult
	var marked func()
	err := s.inTx(ctx, "ingest", func(tx *sql.Tx) error {
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

func (s *Store) ingest(ctx context.Context, tx *sql.Tx, b *crawlkeeper.IngestBatch) (*crawlkeeper.IngestResult, error) {
	keys := crawlkeeper.DistinctKeys(b.Items)
	if err := s.lockKeys(ctx, tx, keys); err != nil {
		return nil, err
	}
	state, err := loadByKeys(ctx, tx, keys, b.Items)
	if err != nil {
		return nil, err
	}
	var ids []int64
	if n := crawlkeeper.NewKeyCount(b.Items, state); n > 0 {
		first, err := s.takeIDs(ctx, n)
		if err != nil {
			return nil, err
		}
		ids = make([]int64, n)
		for i := range ids {
			ids[i] = first + int64(i)
		}
	}
	w, res := crawlkeeper.PlanIngest(b, state, ids)
	if len(w.DeleteArchive) > 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM archive WHERE id IN (`+list(len(w.DeleteArchive))+`)`, int64s(w.DeleteArchive)...); err != nil {
			return nil, fmt.Errorf("revive: %w", err)
		}
	}
	if err := s.insertActive(ctx, tx, w.InsertActive); err != nil {
		return nil, err
	}
	if err := s.update(ctx, tx, "active", w.UpdateActive, false); err != nil {
		return nil, err
	}
	if err := s.touch(ctx, tx, "active", w.TouchActive, state); err != nil {
		return nil, err
	}
	if err := s.update(ctx, tx, "archive", w.UpdateArchive, true); err != nil {
		return nil, err
	}
	if err := s.touch(ctx, tx, "archive", w.TouchArchive, state); err != nil {
		return nil, err
	}
	if err := s.writeHistory(ctx, tx, w.History, w.TrimHistory); err != nil {
		return nil, err
	}
	if err := writeDeliveries(ctx, tx, w.Deliveries); err != nil {
		return nil, err
	}
	return res, nil
}

// deliveryShards is how many counter rows each source's deliveries are
// spread over (see migrations/014_deliveries.sql).
const deliveryShards = 8

// writeDeliveries adds the batch's deliveries to the counters of one
// shard picked at random, in source order (the order every ingest locks
// the rows in).
func writeDeliveries(ctx context.Context, tx *sql.Tx, ds []crawlkeeper.DeliveryCount) error {
	shard := rand.IntN(deliveryShards)
	for _, d := range ds {
		if _, err := tx.ExecContext(ctx, `INSERT INTO deliveries (source, shard, deliveries, duplicates) VALUES (?, ?, ?, ?)
			ON DUPLICATE KEY UPDATE deliveries = deliveries + ?, duplicates = duplicates + ?`,
			d.Source, shard, d.Deliveries, d.Duplicates, d.Deliveries, d.Duplicates); err != nil {
			return fmt.Errorf("count deliveries: %w", err)
		}
	}
	return nil
}

// lockKeys inserts the missing keys into record_keys and locks the rows of
// all of them, in key order (see the package documentation).
func (s *Store) lockKeys(ctx context.Context, tx *sql.Tx, keys []string) error {
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	for _, c := range chunks(sorted, s.maxStatement, func(k string) int { return 2*len(k) + 4 }) {
		if _, err := tx.ExecContext(ctx, "INSERT INTO record_keys (`key`) VALUES "+tuples(len(c), 1)+" ON DUPLICATE KEY UPDATE `key` = `key`", strs(c)...); err != nil {
			return fmt.Errorf("lock keys: %w", err)
		}
	}
	return nil
}

// loadByKeys returns the stored state of every key, active first, then
// archive for the keys not found there.
//
// Most deliveries repeat what is stored, and an unchanged delivery needs
// only the record's small columns (it touches last_updated_at and the
// event fields), so active records are read without their payload,
// derived results and search text first; the records an item of the
// batch changes are read again in full, as their update and history
// need them.
func loadByKeys(ctx context.Context, tx *sql.Tx, keys []string, items []*crawlkeeper.Prepared) (map[string]*crawlkeeper.Record, error) {
	state := make(map[string]*crawlkeeper.Record, len(keys))
	if err := loadInto(ctx, tx, state, keys, "active", narrowRecordCols, false); err != nil {
		return nil, err
	}
	var changed, pending []string
	listed := map[string]bool{}
	for _, it := range items {
		if r := state[it.Key]; r != nil && !listed[it.Key] && r.ContentHash != it.ContentHash {
			changed = append(changed, it.Key)
			listed[it.Key] = true
		}
	}
	for _, k := range keys {
		if state[k] == nil {
			pending = append(pending, k)
		}
	}
	if err := loadInto(ctx, tx, state, changed, "active", recordCols, false); err != nil {
		return nil, err
	}
	if err := loadInto(ctx, tx, state, pending, "archive", archiveCols, true); err != nil {
		return nil, err
	}
	return state, nil
}

// narrowRecordCols is recordCols with the payload, the derived results
// and the search text read as NULL.
var narrowRecordCols = strings.NewReplacer(", item,", ", NULL,", ", derived,", ", NULL,", ", search_text", ", NULL").Replace(recordCols)

// loadInto reads the records of keys from table into state.
func loadInto(ctx context.Context, tx *sql.Tx, state map[string]*crawlkeeper.Record, keys []string, table, cols string, archived bool) error {
	for len(keys) > 0 {
		n := min(len(keys), maxRows)
		recs, err := queryRecords(ctx, tx, archived, `SELECT `+cols+` FROM `+table+" WHERE `key` IN ("+list(n)+`)`, strs(keys[:n])...)
		if err != nil {
			return fmt.Errorf("look up keys: %w", err)
		}
		for _, r := range recs {
			state[r.Key] = r
		}
		keys = keys[n:]
	}
	return nil
}

// takeIDs reserves n ids and returns the first. It runs outside the
// caller's transaction, on a connection of its own, so the counter row is
// locked only for this statement; LAST_INSERT_ID(expr) returns the new
// counter value without a second query.
func (s *Store) takeIDs(ctx context.Context, n int) (int64, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE meta SET value = LAST_INSERT_ID(value + ?) WHERE name = 'next_id'`, n)
	if err != nil {
		return 0, fmt.Errorf("take ids: %w", err)
	}
	next, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("take ids: %w", err)
	}
	return next - int64(n), nil
}

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
