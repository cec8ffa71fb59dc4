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

// mysqlRaw writes with multi-row statements in one transaction per call.
type mysqlRaw struct{ db *sql.DB }

// mysqlCols are the record columns the raw baselines write.
const mysqlCols = rawsql.MySQLCols

// mysqlRows bounds one statement's rows: 200 generated records are a few
// hundred kilobytes, under every default max_allowed_packet.
const mysqlRows = 200

// mysqlSearchText is the schema's search_text: every token suffixed with
// "__" so InnoDB's FULLTEXT minimum token size and stopwords do not drop
// short words.
func mysqlSearchText(s string) string {
	if s == "" {
		return ""
	}
	return strings.ReplaceAll(s, " ", "__ ") + "__"
}

func mysqlArgs(r *crawlkeeper.Record, item []byte) []any {
	if item == nil {
		item = []byte{}
	}
	return append([]any{r.ID, r.Key, storeenc.KeyPartsText(r.KeyParts), r.Source, r.Title, r.URL, item, r.ContentHash,
		r.CrawledAt.UnixMicro(), r.LastUpdatedAt.UnixMicro(), r.LastChangedAt.UnixMicro(), r.Version,
		storeenc.Micros(r.EventAt), storeenc.DateErrorsText(r.DateErrors), storeenc.Micros(r.ProcessedAt),
		r.ProcessedVersion, r.ProcessedChain, storeenc.Blob(r.Derived), mysqlSearchText(r.SearchText)}, rawsql.FetchZero()...)
}

// mysqlWidth is the values of one row of mysqlCols.
const mysqlWidth = 24

func (s *mysqlRaw) tx(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}

func (s *mysqlRaw) insert(ctx context.Context, tx *sql.Tx, recs []*crawlkeeper.Record, suffix string) error {
	return batches(recs, mysqlRows, func(c []*crawlkeeper.Record) error {
		args := make([]any, 0, len(c)*mysqlWidth)
		for _, r := range c {
			if err := checkText(r); err != nil {
				return err
			}
			args = append(args, mysqlArgs(r, r.Item)...)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO active (`+mysqlCols+`) VALUES `+placeholders(len(c), mysqlWidth)+suffix, args...)
		return err
	})
}

// Insert writes recs with multi-row INSERTs.
func (s *mysqlRaw) Insert(ctx context.Context, recs []*crawlkeeper.Record) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return s.insert(ctx, tx, recs, "") })
}

// Touch sets last_updated_at of the rows of keys and counts the delivery
// (rawsql.TouchSet), one UPDATE per 200 keys.
func (s *mysqlRaw) Touch(ctx context.Context, keys []string, now time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		return batches(keys, mysqlRows, func(c []string) error {
			args := make([]any, 0, len(c)+2)
			args = append(args, now.UnixMicro(), now.UnixMicro())
			for _, k := range c {
				args = append(args, k)
			}
			_, err := tx.ExecContext(ctx, "UPDATE active SET "+rawsql.TouchSet("GREATEST", "?")+" WHERE `key` IN (?"+strings.Repeat(",?", len(c)-1)+")", args...)
			return err
		})
	})
}

// Change inserts hist with multi-row INSERTs and updates the rows with
// MySQL's batched-update idiom, a multi-row INSERT ... ON DUPLICATE KEY
// UPDATE of the changed columns (VALUES(): MariaDB has no other form).
func (s *mysqlRaw) Change(ctx context.Context, recs []*crawlkeeper.Record, hist []*crawlkeeper.HistoryEntry) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := batches(hist, mysqlRows, func(c []*crawlkeeper.HistoryEntry) error {
			args := make([]any, 0, len(c)*6)
			for _, h := range c {
				args = append(args, h.RecordID, h.Version, []byte(h.Item), h.ContentHash, h.ValidFrom.UnixMicro(), h.ValidTo.UnixMicro())
			}
			_, err := tx.ExecContext(ctx, `INSERT IGNORE INTO history (record_id, version, item, content_hash, valid_from, valid_to) VALUES `+placeholders(len(c), 6), args...)
			return err
		}); err != nil {
			return err
		}
		return s.insert(ctx, tx, recs, ` ON DUPLICATE KEY UPDATE `+rawsql.ChangeSet("GREATEST", "", "VALUES(last_updated_at)")+`,
			title = VALUES(title), url = VALUES(url), item = VALUES(item), content_hash = VALUES(content_hash),
			last_updated_at = VALUES(last_updated_at), last_changed_at = VALUES(last_changed_at), version = VALUES(version), event_at = VALUES(event_at),
			date_errors = VALUES(date_errors), search_text = VALUES(search_text)`)
	})
}

// SelectAge reads what an age rule selects in the index's order;
// unindexed, the optimizer is told to ignore the index.
func (s *mysqlRaw) SelectAge(ctx context.Context, cutoff time.Time, indexed bool) (int, error) {
	hint := " IGNORE INDEX (active_crawled_at)"
	if indexed {
		hint = ""
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, version, last_updated_at FROM active`+hint+` WHERE crawled_at <= ? ORDER BY crawled_at, id`, cutoff.UnixMicro())
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

// Move copies rows to the archive with INSERT ... SELECT and deletes them
// from active, in one transaction.
func (s *mysqlRaw) Move(ctx context.Context, ids []int64, now time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		return batches(ids, 1000, func(c []int64) error {
			args := []any{now.UnixMicro()}
			for _, id := range c {
				args = append(args, id)
			}
			in := `(?` + strings.Repeat(",?", len(c)-1) + `)`
			if _, err := tx.ExecContext(ctx, `INSERT INTO archive (`+mysqlCols+`, item_bytes, archived_at, archive_reason)
				SELECT `+mysqlCols+`, length(item), ?, 'age' FROM active WHERE id IN `+in, args...); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `DELETE FROM active WHERE id IN `+in, args[1:]...)
			return err
		})
	})
}

// Keyset reads one keyset page of active records in id order, every
// column.
func (s *mysqlRaw) Keyset(ctx context.Context, afterID int64, limit int) (int, int64, error) {
	return keysetRows(s.db.QueryContext(ctx, `SELECT `+mysqlCols+` FROM active WHERE id > ? ORDER BY id LIMIT ?`, afterID, limit))
}

// ProcessPage reads a keyset page and writes a result for each of its
// records with UPDATE ... JOIN over a derived table of the rows.
func (s *mysqlRaw) ProcessPage(ctx context.Context, afterID int64, limit int, at time.Time) (int, int64, error) {
	ids, versions, err := pageVersions(s.db.QueryContext(ctx, `SELECT `+mysqlCols+` FROM active WHERE id > ? ORDER BY id LIMIT ?`, afterID, limit))
	if err != nil || len(ids) == 0 {
		return 0, afterID, err
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		return batches(ids, mysqlRows, func(c []int64) error {
			var b strings.Builder
			args := make([]any, 0, 4*len(c))
			for i, id := range c {
				if i == 0 {
					b.WriteString("SELECT ? AS id, ? AS version, ? AS at, ? AS derived")
				} else {
					b.WriteString(" UNION ALL SELECT ?, ?, ?, ?")
				}
				args = append(args, id, versions[id], at.UnixMicro(), rawsql.Derived(id, at.UnixMicro()))
			}
			_, err := tx.ExecContext(ctx, `UPDATE active t JOIN (`+b.String()+`) u ON t.id = u.id AND t.version = u.version
				SET t.processed_at = u.at, t.processed_version = u.version, t.processed_chain = 'raw', t.derived = u.derived`, args...)
			return err
		})
	})
	return len(ids), ids[len(ids)-1], err
}

// Newest reads the limit most recently updated active records.
func (s *mysqlRaw) Newest(ctx context.Context, limit int) (int, error) {
	return countRows(s.db.QueryContext(ctx, `SELECT `+mysqlCols+` FROM active ORDER BY last_updated_at DESC LIMIT ?`, limit))
}

// ArchiveInsert writes recs straight into the archive, compressed as the
// store keeps archived payloads.
func (s *mysqlRaw) ArchiveInsert(ctx context.Context, recs []*crawlkeeper.Record, at time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		return batches(recs, mysqlRows, func(c []*crawlkeeper.Record) error {
			args := make([]any, 0, len(c)*(mysqlWidth+3))
			for _, r := range c {
				args = append(args, mysqlArgs(r, zstd.Compress(nil, r.Item))...)
				args = append(args, at.UnixMicro(), string(crawlkeeper.ReasonAge), len(r.Item))
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO archive (`+mysqlCols+`, archived_at, archive_reason, item_bytes) VALUES `+placeholders(len(c), mysqlWidth+3), args...)
			return err
		})
	})
}

// Search is the hand-written FULLTEXT query (rawsql.MySQLSearch).
func (s *mysqlRaw) Search(ctx context.Context, words []string, phrase bool, source string, limit int) (int, error) {
	q, args := rawsql.MySQLSearch(rawsql.Query{Words: words, Phrase: phrase, Source: source, Limit: limit})
	return countRows(s.db.QueryContext(ctx, q, args...))
}

// SyncIDs moves the id counter past every stored id.
func (s *mysqlRaw) SyncIDs(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx, `UPDATE meta SET value = GREATEST(value, (SELECT coalesce(max(id), 0) + 1 FROM active), (SELECT coalesce(max(id), 0) + 1 FROM archive)) WHERE name = 'next_id'`)
	return err
}

// Analyze refreshes the optimizer's statistics of the record tables.
func (s *mysqlRaw) Analyze(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, `ANALYZE TABLE active, archive, history`)
	if err != nil {
		return err
	}
	return rows.Close()
}
