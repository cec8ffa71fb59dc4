package rawbench

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/rawbench/rawsql"
	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
	"github.com/crawlkeeper/crawlkeeper/internal/zstd"
)

// sqliteRaw writes on the store's writer connection, which carries the
// store's pragmas (synchronous, journal mode), so both paths run with the
// same durability, and reads on its reader pool.
type sqliteRaw struct{ w, r *sql.DB }

// sqliteCols are the record columns the raw baselines write.
const sqliteCols = rawsql.SQLiteCols

// sqliteRows is the rows of one IN list: 500 values stay well under
// SQLite's limit of 32,766 bound values.
const sqliteRows = 500

// sqliteInsertRows is the rows of one multi-row INSERT. The statement is
// prepared once per transaction and run for every full run of rows:
// compiling a statement of thousands of values costs more than running it
// (a CPU profile of 500-row statements had a fifth of the time in the
// driver's allocator freeing each compiled statement).
const sqliteInsertRows = 50

// insertRows inserts rows (each as wide as the first) with multi-row
// INSERTs of head, sqliteInsertRows rows each, the full ones through one
// prepared statement.
func insertRows(ctx context.Context, tx *sql.Tx, head string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	width := len(rows[0])
	var full *sql.Stmt
	defer func() {
		if full != nil {
			full.Close()
		}
	}()
	return batches(rows, sqliteInsertRows, func(c [][]any) error {
		args := make([]any, 0, len(c)*width)
		for _, r := range c {
			args = append(args, r...)
		}
		if len(c) < sqliteInsertRows {
			_, err := tx.ExecContext(ctx, head+placeholders(len(c), width), args...)
			return err
		}
		if full == nil {
			var err error
			if full, err = tx.PrepareContext(ctx, head+placeholders(len(c), width)); err != nil {
				return err
			}
		}
		_, err := full.ExecContext(ctx, args...)
		return err
	})
}

func sqliteArgs(r *crawlkeeper.Record, item []byte) []any {
	var derived any
	if len(r.Derived) > 0 {
		derived = []byte(r.Derived)
	}
	return append([]any{r.ID, r.Key, storeenc.KeyPartsText(r.KeyParts), r.Source, r.Title, r.URL, item, r.ContentHash,
		r.CrawledAt.UnixMicro(), r.LastUpdatedAt.UnixMicro(), r.LastChangedAt.UnixMicro(), r.Version,
		storeenc.Micros(r.EventAt), storeenc.DateErrorsText(r.DateErrors), storeenc.Micros(r.ProcessedAt), r.ProcessedVersion,
		r.ProcessedChain, derived, r.SearchText}, rawsql.FetchZero()...)
}

// tx runs f in a write transaction. The schema's triggers note changed
// rows in search_pending; like the store, the transaction applies the
// notes to the FTS5 tables before it commits, so the baseline pays for the
// full-text index as crawlkeeper does and leaves it complete.
func (s *sqliteRaw) tx(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	for k, table := range []string{"active", "archive"} {
		fts := table + "_search"
		for _, q := range []string{
			`INSERT INTO ` + fts + ` (` + fts + `, rowid, search_text) SELECT 'delete', id, indexed FROM search_pending WHERE tbl = ? AND indexed IS NOT NULL`,
			`INSERT INTO ` + fts + ` (rowid, search_text) SELECT t.id, t.search_text FROM search_pending p JOIN ` + table + ` t ON t.id = p.id WHERE p.tbl = ? AND t.search_text IS NOT NULL`,
		} {
			if _, err := tx.ExecContext(ctx, q, k); err != nil {
				return err
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM search_pending`); err != nil {
		return err
	}
	return tx.Commit()
}

// Insert writes recs with multi-row INSERTs in one transaction.
func (s *sqliteRaw) Insert(ctx context.Context, recs []*crawlkeeper.Record) error {
	rows := make([][]any, len(recs))
	for i, r := range recs {
		if err := checkText(r); err != nil {
			return err
		}
		rows[i] = sqliteArgs(r, r.Item)
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		return insertRows(ctx, tx, `INSERT INTO active (`+sqliteCols+`) VALUES `, rows)
	})
}

// Touch sets last_updated_at of the rows of keys and counts the delivery
// (rawsql.TouchSet): one UPDATE per 500 keys, as every row of a delivery
// gets the same time.
func (s *sqliteRaw) Touch(ctx context.Context, keys []string, now time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		return batches(keys, sqliteRows, func(c []string) error {
			args := make([]any, 0, len(c)+1)
			args = append(args, now.UnixMicro())
			for _, k := range c {
				args = append(args, k)
			}
			_, err := tx.ExecContext(ctx, `UPDATE active SET `+rawsql.TouchSet("max", "?1")+` WHERE key IN (?`+strings.Repeat(",?", len(c)-1)+`)`, args...)
			return err
		})
	})
}

// Change inserts hist with multi-row INSERTs and updates each row's
// content with one prepared UPDATE by id.
func (s *sqliteRaw) Change(ctx context.Context, recs []*crawlkeeper.Record, hist []*crawlkeeper.HistoryEntry) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		rows := make([][]any, len(hist))
		for i, h := range hist {
			rows[i] = []any{h.RecordID, h.Version, []byte(h.Item), h.ContentHash, h.ValidFrom.UnixMicro(), h.ValidTo.UnixMicro()}
		}
		if err := insertRows(ctx, tx, `INSERT OR REPLACE INTO history (record_id, version, item, content_hash, valid_from, valid_to) VALUES `, rows); err != nil {
			return err
		}
		st, err := tx.PrepareContext(ctx, `UPDATE active SET `+rawsql.ChangeSet("max", "", "?5")+`, title = ?1, url = ?2, item = ?3, content_hash = ?4,
			last_updated_at = ?5, last_changed_at = ?6, version = ?7, event_at = ?8, date_errors = ?9, search_text = ?10 WHERE id = ?11`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, r := range recs {
			if _, err := st.ExecContext(ctx, r.Title, r.URL, []byte(r.Item), r.ContentHash, r.LastUpdatedAt.UnixMicro(), r.LastChangedAt.UnixMicro(),
				r.Version, storeenc.Micros(r.EventAt), storeenc.DateErrorsText(r.DateErrors), r.SearchText, r.ID); err != nil {
				return err
			}
		}
		return nil
	})
}

// SelectAge reads the rows an age rule selects, in the order of the
// crawled_at index; unindexed, SQLite is told to use no index, as if the
// indexes had been dropped.
func (s *sqliteRaw) SelectAge(ctx context.Context, cutoff time.Time, indexed bool) (int, error) {
	hint := " NOT INDEXED"
	if indexed {
		hint = ""
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, version, last_updated_at FROM active`+hint+` WHERE crawled_at <= ? ORDER BY crawled_at, id`, cutoff.UnixMicro())
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id, v, u int64
		if err := rows.Scan(&id, &v, &u); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

// Move copies rows to the archive with INSERT ... SELECT, payloads as
// they are, and deletes them from active, in one transaction.
func (s *sqliteRaw) Move(ctx context.Context, ids []int64, now time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		return batches(ids, sqliteRows, func(c []int64) error {
			args := []any{now.UnixMicro()}
			for _, id := range c {
				args = append(args, id)
			}
			in := `(?` + strings.Repeat(",?", len(c)-1) + `)`
			if _, err := tx.ExecContext(ctx, `INSERT INTO archive (`+sqliteCols+`, item_bytes, archived_at, archive_reason) SELECT `+sqliteCols+`, length(item), ?, 'age' FROM active WHERE id IN `+in, args...); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `DELETE FROM active WHERE id IN `+in, args[1:]...)
			return err
		})
	})
}

// ProcessPage reads a keyset page and writes a result for each of its
// records with UPDATE ... FROM (VALUES ...), 200 rows a statement.
func (s *sqliteRaw) ProcessPage(ctx context.Context, afterID int64, limit int, at time.Time) (int, int64, error) {
	ids, versions, err := pageVersions(s.r.QueryContext(ctx, `SELECT `+sqliteCols+` FROM active WHERE id > ? ORDER BY id LIMIT ?`, afterID, limit))
	if err != nil || len(ids) == 0 {
		return 0, afterID, err
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		return batches(ids, 200, func(c []int64) error {
			args := make([]any, 0, 4*len(c))
			for _, id := range c {
				args = append(args, id, versions[id], at.UnixMicro(), rawsql.Derived(id, at.UnixMicro()))
			}
			_, err := tx.ExecContext(ctx, `UPDATE active SET processed_at = v.column3, processed_version = v.column2, processed_chain = 'raw', derived = v.column4
				FROM (VALUES `+placeholders(len(c), 4)+`) AS v WHERE active.id = v.column1 AND active.version = v.column2`, args...)
			return err
		})
	})
	return len(ids), ids[len(ids)-1], err
}

// pageVersions reads whole rows of record columns and returns their ids,
// in order, and versions.
func pageVersions(rows *sql.Rows, err error) ([]int64, map[int64]int64, error) {
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var ids []int64
	versions := map[int64]int64{}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		id, v := asInt(vals[0]), asInt(vals[11])
		ids = append(ids, id)
		versions[id] = v
	}
	return ids, versions, rows.Err()
}

// asInt reads an integer column as database/sql drivers return it.
func asInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case []byte:
		var n int64
		for _, c := range x {
			n = n*10 + int64(c-'0')
		}
		return n
	}
	return 0
}

// Keyset reads one keyset page of active records in id order, every
// column, and returns the count and the last id.
func (s *sqliteRaw) Keyset(ctx context.Context, afterID int64, limit int) (int, int64, error) {
	return keysetRows(s.r.QueryContext(ctx, `SELECT `+sqliteCols+` FROM active WHERE id > ? ORDER BY id LIMIT ?`, afterID, limit))
}

// Newest reads the limit most recently updated active records, every
// column.
func (s *sqliteRaw) Newest(ctx context.Context, limit int) (int, error) {
	return countRows(s.r.QueryContext(ctx, `SELECT `+sqliteCols+` FROM active ORDER BY last_updated_at DESC LIMIT ?`, limit))
}

// ArchiveInsert writes recs straight into the archive, compressed as the
// store keeps archived payloads; the benchmark builds large archives
// with it.
func (s *sqliteRaw) ArchiveInsert(ctx context.Context, recs []*crawlkeeper.Record, at time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		rows := make([][]any, len(recs))
		for i, r := range recs {
			rows[i] = append(sqliteArgs(r, zstd.Compress(nil, r.Item)), len(r.Item), at.UnixMicro(), string(crawlkeeper.ReasonAge))
		}
		if err := insertRows(ctx, tx, `INSERT INTO archive (`+sqliteCols+`, item_bytes, archived_at, archive_reason) VALUES `, rows); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE meta SET value = max(value, (SELECT coalesce(max(id), 0) + 1 FROM archive)) WHERE name = 'next_id'`)
		return err
	})
}

// Search is the hand-written FTS5 query (rawsql.SQLiteSearch).
func (s *sqliteRaw) Search(ctx context.Context, words []string, phrase bool, source string, limit int) (int, error) {
	q, args := rawsql.SQLiteSearch(rawsql.Query{Words: words, Phrase: phrase, Source: source, Limit: limit})
	return countRows(s.r.QueryContext(ctx, q, args...))
}

// SyncIDs moves the store's id counter past every stored id.
func (s *sqliteRaw) SyncIDs(ctx context.Context) error {
	_, err := s.w.ExecContext(ctx, `UPDATE meta SET value = max(value, (SELECT coalesce(max(id), 0) + 1 FROM active), (SELECT coalesce(max(id), 0) + 1 FROM archive)) WHERE name = 'next_id'`)
	return err
}

// Analyze refreshes the query planner's statistics.
func (s *sqliteRaw) Analyze(ctx context.Context) error {
	_, err := s.w.ExecContext(ctx, `ANALYZE`)
	return err
}

// keysetRows reads every column of every row and returns the count and
// the first column of the last row (the id).
func keysetRows(rows *sql.Rows, err error) (int, int64, error) {
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, 0, err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n, last := 0, int64(0)
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, last, err
		}
		if id, ok := vals[0].(int64); ok {
			last = id
		}
		n++
	}
	return n, last, rows.Err()
}
