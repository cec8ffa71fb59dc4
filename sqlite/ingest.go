package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/zstd"
)

// keyChunk bounds the placeholders of one IN (...) lookup.
const keyChunk = 500

// Ingest implements crawlkeeper.Store: the whole batch is one transaction.
// The current state of every key in the batch is read with a few IN (...)
// queries, crawlkeeper.PlanIngest decides each item, and the writes reuse
// prepared statements, so a batch costs a handful of round trips rather
// than one per item.
func (s *Store) Ingest(ctx context.Context, b *crawlkeeper.IngestBatch) (*crawlkeeper.IngestResult, error) {
	if len(b.Items) == 0 {
		return &crawlkeeper.IngestResult{Outcomes: []crawlkeeper.Outcome{}, IDs: []int64{}}, nil
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, fmt.Errorf("ingest: begin: %w", err)
	}
	defer tx.Rollback()

	state, err := loadByKeys(ctx, tx, b.Items)
	if err != nil {
		return nil, err
	}
	var ids []int64
	if n := crawlkeeper.NewKeyCount(b.Items, state); n > 0 {
		var next int64
		if err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE name = 'next_id'`).Scan(&next); err != nil {
			return nil, fmt.Errorf("ingest: read id counter: %w", err)
		}
		ids = make([]int64, n)
		for i := range ids {
			ids[i] = next + int64(i)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE meta SET value = ? WHERE name = 'next_id'`, next+int64(n)); err != nil {
			return nil, fmt.Errorf("ingest: take ids: %w", err)
		}
	}
	plan, res := crawlkeeper.PlanIngest(b, state, ids)
	w := s.newWriter(ctx, tx)
	defer w.close()
	if err := w.apply(plan); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	w.close()
	marked, err := s.writeMarks(ctx, tx, b.Marks)
	if err != nil {
		return nil, err
	}
	if err := s.commitWrite(ctx, tx); err != nil {
		return nil, fmt.Errorf("ingest: commit: %w", err)
	}
	if marked != nil {
		marked()
		res.MarksWritten = true
	}
	return res, nil
}

// apply executes an ingest plan, one prepared statement per row: on the
// embedded engine a statement costs no round trip, so multi-row statements
// would save little and cost a statement per batch size.
func (w *writer) apply(p *crawlkeeper.IngestWrites) error {
	for _, id := range p.DeleteArchive {
		if _, err := w.exec(`DELETE FROM archive WHERE id = ?`, id); err != nil {
			return err
		}
	}
	for _, r := range p.InsertActive {
		if err := w.insertActive(r); err != nil {
			return err
		}
	}
	for _, r := range p.UpdateActive {
		if err := w.updateActive(r); err != nil {
			return err
		}
	}
	for _, r := range p.TouchActive {
		if err := w.touchActive(r); err != nil {
			return err
		}
	}
	for _, r := range p.UpdateArchive {
		if err := w.updateArchive(r, true); err != nil {
			return err
		}
	}
	for _, r := range p.TouchArchive {
		if err := w.updateArchive(r, false); err != nil {
			return err
		}
	}
	for _, h := range p.History {
		if _, err := w.exec(`INSERT OR REPLACE INTO history (record_id, version, item, content_hash, valid_from, valid_to) VALUES (?,?,?,?,?,?)`,
			h.RecordID, h.Version, []byte(h.Item), h.ContentHash, h.ValidFrom.UnixMicro(), h.ValidTo.UnixMicro()); err != nil {
			return err
		}
	}
	for _, t := range p.TrimHistory {
		if _, err := w.exec(`DELETE FROM history WHERE record_id = ? AND version <= ?`, t.RecordID, t.UpTo); err != nil {
			return err
		}
	}
	for _, d := range p.Deliveries {
		if _, err := w.exec(`INSERT INTO deliveries (source, shard, deliveries, duplicates) VALUES (?, 0, ?, ?)
			ON CONFLICT (source, shard) DO UPDATE SET deliveries = deliveries + excluded.deliveries, duplicates = duplicates + excluded.duplicates`,
			d.Source, d.Deliveries, d.Duplicates); err != nil {
			return err
		}
	}
	return nil
}

// lightCols reads active records without the columns an ingest does not
// need (item, key_parts, derived): re-crawls are the common case, and
// decoding payloads nobody uses would dominate them. Items are fetched
// separately for the records whose content changes (loadItems).
var lightCols = strings.NewReplacer("key_parts,", "'[]',", " item,", " x'',", " derived", " NULL", " search_text", " NULL").Replace(recordCols)

// loadByKeys returns the stored state of every distinct key in items,
// active first (without payloads), then archive (in full: a revived record
// is rewritten whole).
func loadByKeys(ctx context.Context, tx *sql.Tx, items []*crawlkeeper.Prepared) (map[string]*crawlkeeper.Record, error) {
	state := make(map[string]*crawlkeeper.Record, len(items))
	seen := make(map[string]bool, len(items))
	keys := make([]string, 0, len(items))
	for _, it := range items {
		if !seen[it.Key] {
			seen[it.Key] = true
			keys = append(keys, it.Key)
		}
	}
	for _, archived := range []bool{false, true} {
		var pending []string
		for _, k := range keys {
			if state[k] == nil {
				pending = append(pending, k)
			}
		}
		table, cols := "active", lightCols
		if archived {
			table, cols = "archive", archiveCols
		}
		for len(pending) > 0 {
			n := min(len(pending), keyChunk)
			chunk := pending[:n]
			pending = pending[n:]
			args := make([]any, n)
			for i, k := range chunk {
				args[i] = k
			}
			q := `SELECT ` + cols + ` FROM ` + table + ` WHERE key IN (?` + strings.Repeat(",?", n-1) + `)`
			rows, err := tx.QueryContext(ctx, q, args...)
			if err != nil {
				return nil, fmt.Errorf("ingest: look up keys: %w", err)
			}
			for rows.Next() {
				r, err := scanRecord(rows, archived)
				if err != nil {
					rows.Close()
					return nil, fmt.Errorf("ingest: look up keys: %w", err)
				}
				state[r.Key] = r
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return nil, fmt.Errorf("ingest: look up keys: %w", err)
			}
		}
	}
	return state, loadItems(ctx, tx, items, state)
}

// loadItems fetches the stored items of active records whose content a
// batch item changes: the previous version goes to history.
func loadItems(ctx context.Context, tx *sql.Tx, items []*crawlkeeper.Prepared, state map[string]*crawlkeeper.Record) error {
	byID := map[int64]*crawlkeeper.Record{}
	for _, it := range items {
		if r := state[it.Key]; r != nil && !r.Archived() && r.ContentHash != it.ContentHash {
			byID[r.ID] = r
		}
	}
	ids := make([]any, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	for len(ids) > 0 {
		n := min(len(ids), keyChunk)
		rows, err := tx.QueryContext(ctx, `SELECT id, item FROM active WHERE id IN (?`+strings.Repeat(",?", n-1)+`)`, ids[:n]...)
		if err != nil {
			return fmt.Errorf("ingest: load items: %w", err)
		}
		for rows.Next() {
			var id int64
			var item []byte
			if err := rows.Scan(&id, &item); err != nil {
				rows.Close()
				return fmt.Errorf("ingest: load items: %w", err)
			}
			byID[id].Item = item
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("ingest: load items: %w", err)
		}
		ids = ids[n:]
	}
	return nil
}

// writer holds the prepared statements of one write transaction.
type writer struct {
	ctx   context.Context
	s     *Store
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
}

func (s *Store) newWriter(ctx context.Context, tx *sql.Tx) *writer {
	return &writer{ctx: ctx, s: s, tx: tx, stmts: map[string]*sql.Stmt{}}
}

func (w *writer) close() {
	for k, st := range w.stmts {
		st.Close()
		delete(w.stmts, k)
	}
}

// exec runs q with a statement prepared once on the writer connection
// and borrowed by this transaction.
func (w *writer) exec(q string, args ...any) (sql.Result, error) {
	st, ok := w.stmts[q]
	if !ok {
		var err error
		st, err = w.s.writeStmt(w.ctx, w.tx, q)
		if err != nil {
			return nil, fmt.Errorf("prepare: %w", err)
		}
		w.stmts[q] = st
	}
	res, err := st.ExecContext(w.ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("write: %w", err)
	}
	return res, nil
}

const insertActiveSQL = `INSERT INTO active (` + recordCols + `) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`

func recordArgs(r *crawlkeeper.Record, item []byte) []any {
	return []any{r.ID, r.Key, keyPartsText(r.KeyParts), r.Source, r.Title, r.URL, item, r.ContentHash,
		r.CrawledAt.UnixMicro(), r.LastUpdatedAt.UnixMicro(), r.LastChangedAt.UnixMicro(), r.Version,
		timeArg(r.EventAt), jsonStrings(r.DateErrors), timeArg(r.ProcessedAt), r.ProcessedVersion,
		r.ProcessedChain, blobArg(r.Derived), r.SearchText, r.LastRound, r.LastTarget}
}

func (w *writer) insertActive(r *crawlkeeper.Record) error {
	_, err := w.exec(insertActiveSQL, recordArgs(r, r.Item)...)
	return err
}

func (w *writer) updateActive(r *crawlkeeper.Record) error {
	_, err := w.exec(`UPDATE active SET key_parts = ?, title = ?, url = ?, item = ?, content_hash = ?, last_updated_at = ?, last_changed_at = ?, version = ?, event_at = ?, date_errors = ?, search_text = ?, last_round = ?, last_target = ? WHERE id = ?`,
		keyPartsText(r.KeyParts), r.Title, r.URL, []byte(r.Item), r.ContentHash, r.LastUpdatedAt.UnixMicro(),
		r.LastChangedAt.UnixMicro(), r.Version, timeArg(r.EventAt), jsonStrings(r.DateErrors), r.SearchText,
		r.LastRound, r.LastTarget, r.ID)
	return err
}

func (w *writer) touchActive(r *crawlkeeper.Record) error {
	_, err := w.exec(`UPDATE active SET last_updated_at = ?, event_at = ?, date_errors = ?, last_round = ?, last_target = ? WHERE id = ?`,
		r.LastUpdatedAt.UnixMicro(), timeArg(r.EventAt), jsonStrings(r.DateErrors), r.LastRound, r.LastTarget, r.ID)
	return err
}

// insertArchive writes r to the archive with its payload compressed.
func (w *writer) insertArchive(r *crawlkeeper.Record, at time.Time, reason crawlkeeper.ArchiveReason) error {
	args := recordArgs(r, zstd.Compress(nil, r.Item))
	args = append(args, len(r.Item), at.UnixMicro(), string(reason))
	_, err := w.exec(`INSERT INTO archive (`+recordCols+`, item_bytes, archived_at, archive_reason) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, args...)
	return err
}

func (w *writer) updateArchive(r *crawlkeeper.Record, changed bool) error {
	if !changed {
		_, err := w.exec(`UPDATE archive SET last_updated_at = ?, event_at = ?, date_errors = ?, last_round = ?, last_target = ? WHERE id = ?`,
			r.LastUpdatedAt.UnixMicro(), timeArg(r.EventAt), jsonStrings(r.DateErrors), r.LastRound, r.LastTarget, r.ID)
		return err
	}
	_, err := w.exec(`UPDATE archive SET key_parts = ?, title = ?, url = ?, item = ?, item_bytes = ?, content_hash = ?, last_updated_at = ?, last_changed_at = ?, version = ?, event_at = ?, date_errors = ?, search_text = ?, last_round = ?, last_target = ? WHERE id = ?`,
		keyPartsText(r.KeyParts), r.Title, r.URL, zstd.Compress(nil, r.Item), len(r.Item), r.ContentHash,
		r.LastUpdatedAt.UnixMicro(), r.LastChangedAt.UnixMicro(), r.Version, timeArg(r.EventAt),
		jsonStrings(r.DateErrors), r.SearchText, r.LastRound, r.LastTarget, r.ID)
	return err
}
