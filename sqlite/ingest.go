package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/zstd"
)

// keyChunk bounds the placeholders of one IN (...) lookup.
const keyChunk = 500

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
