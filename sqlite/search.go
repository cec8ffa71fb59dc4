package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
)

// Full-text search runs on FTS5 tables in external-content mode
// (active_search, archive_search; migration 010): the index holds the
// tokens of each record's search_text and points at the record by its id.
// Triggers note every insert, delete and search text change of the record
// tables in search_pending, and commitWrite applies the notes to the
// index just before each write transaction commits, so the index changes
// in the same transaction as the records, in one bulk write per batch.
// The search text is folded and tokenised in Go (crawlkeeper.SearchText),
// so the index agrees with the other stores; FTS5 supplies the inverted
// index, phrase and prefix matching and BM25 ranking.

var _ crawlkeeper.SearchStore = (*Store)(nil)

// ftsMatch renders a parsed query as an FTS5 MATCH expression: each term a
// quoted phrase (prefix terms end in *), the terms joined by AND, the
// excluded ones after NOT.
func ftsMatch(e *crawlkeeper.SearchExpr) string {
	var pos, neg []string
	for _, t := range e.Terms {
		s := `"` + strings.ReplaceAll(strings.Join(t.Tokens, " "), `"`, `""`) + `"`
		if t.Prefix {
			s += "*"
		}
		if t.Exclude {
			neg = append(neg, s)
		} else {
			pos = append(pos, s)
		}
	}
	out := "(" + strings.Join(pos, " AND ") + ")"
	for _, n := range neg {
		out += " NOT " + n
	}
	return out
}

// SearchSQL implements sqlstore.Searcher. By relevance, the FTS5 index
// yields the matching ids with their BM25 score, the page's ids are sorted
// out of those alone, and only the page's records are joined by primary
// key; by newest, the matching ids filter the records table. Either way
// the index does the matching and SQLite's planner never scans the
// records table (see TestSearchUsesIndex).
func (engine) SearchSQL(p *crawlkeeper.SearchPlan, table, cols string, where []string, args []any) (string, []any) {
	fts := table + "_search"
	args = append([]any{ftsMatch(p.Expr)}, args...)
	if p.Order == crawlkeeper.SearchNewest {
		where = append([]string{`t.id IN (SELECT rowid FROM ` + fts + ` WHERE ` + fts + ` MATCH ?)`}, where...)
		return `SELECT ` + cols + `, 0 FROM ` + table + ` t WHERE ` + strings.Join(where, " AND ") +
			` ORDER BY t.last_updated_at DESC, t.id DESC LIMIT ?`, append(args, p.Limit+1)
	}
	// The index ranks and sorts the matching ids alone, and only the
	// page's records are read whole: joining every match's full row before
	// the sort costs most of a common word's query. The records table
	// joins the inner query only when a filter needs its columns (every
	// filter so far is on a records column).
	score := `-bm25(` + fts + `)`
	inner := `SELECT ` + fts + `.rowid AS id, ` + score + ` AS score FROM ` + fts
	if len(where) > 0 {
		inner += ` JOIN ` + table + ` t ON t.id = ` + fts + `.rowid`
	}
	if c := p.After; c != nil {
		where = append(where, "("+score+" < ? OR ("+score+" = ? AND "+fts+".rowid > ?))")
		args = append(args, c.Score, c.Score, c.ID)
	}
	where = append([]string{fts + ` MATCH ?`}, where...)
	inner += ` WHERE ` + strings.Join(where, " AND ") + ` ORDER BY score DESC, id LIMIT ?`
	return `SELECT ` + cols + `, f.score FROM (` + inner + `) f JOIN ` + table + ` t ON t.id = f.id ORDER BY f.score DESC, t.id`, append(args, p.Limit+1)
}

// commitWrite applies the transaction's search_pending notes to the FTS5
// indexes, then commits. Every write transaction that inserts, deletes or
// changes the search text of records commits through it.
func (s *Store) commitWrite(ctx context.Context, tx *sql.Tx) error {
	var pending bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM search_pending)`).Scan(&pending); err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	if pending {
		for k, table := range []string{"active", "archive"} {
			fts := table + "_search"
			for _, q := range []string{
				`INSERT INTO ` + fts + ` (` + fts + `, rowid, search_text) SELECT 'delete', id, indexed FROM search_pending WHERE tbl = ? AND indexed IS NOT NULL`,
				`INSERT INTO ` + fts + ` (rowid, search_text) SELECT t.id, t.search_text FROM search_pending p JOIN ` + table + ` t ON t.id = p.id WHERE p.tbl = ? AND t.search_text IS NOT NULL`,
			} {
				if _, err := tx.ExecContext(ctx, q, k); err != nil {
					return fmt.Errorf("search index: %w", err)
				}
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM search_pending`); err != nil {
			return fmt.Errorf("search index: %w", err)
		}
	}
	return tx.Commit()
}

// CheckSearch verifies both FTS5 indexes against their tables: every
// record with a search text has an index entry (FTS5's docsize row, keyed
// by the record id) and every entry has its record, each violation named
// by id. When no record lacks a search text, FTS5's own integrity check
// also compares every token of the index with the stored texts. Records
// written before search existed (search_text NULL) are listed.
func (e engine) CheckSearch(ctx context.Context, add func(crawlkeeper.Violation)) error {
	for k, table := range []string{"active", "archive"} {
		fts := table + "_search"
		probes := []struct{ kind, query, msg string }{
			{"search_pending", `SELECT id, '' FROM search_pending WHERE tbl = ` + fmt.Sprint(k),
				"a committed write left the full-text index of %s without its change for record %d: run crawlkeeper search --reindex"},
			{"search_missing", `SELECT id, key FROM ` + table + ` t WHERE search_text IS NULL`, ""},
			{"search_missing", `SELECT id, key FROM ` + table + ` t WHERE search_text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ` + fts + `_docsize d WHERE d.id = t.id)`,
				"%s record %d has no entry in the full-text index: run crawlkeeper search --reindex"},
			{"search_orphan", `SELECT d.id, '' FROM ` + fts + `_docsize d WHERE NOT EXISTS (SELECT 1 FROM ` + table + ` t WHERE t.id = d.id AND t.search_text IS NOT NULL)`,
				"the full-text index of %s has an entry for record %d, which is not there: run crawlkeeper search --reindex"},
		}
		found := 0
		for _, p := range probes {
			err := sqlstore.EachRow(ctx, sqlstore.SQL(e.s.r), func(rows sqlstore.Rows) error {
				var id int64
				var key string
				if err := rows.Scan(&id, &key); err != nil {
					return err
				}
				found++
				if p.msg == "" {
					add(crawlkeeper.SearchMissing(table, id, key))
				} else {
					add(crawlkeeper.Violation{Kind: p.kind, ID: id, Key: key, Message: fmt.Sprintf(p.msg, table, id)})
				}
				return nil
			}, p.query+` LIMIT ?`, storeenc.MaxViolations)
			if err != nil {
				return fmt.Errorf("check search: %w", err)
			}
		}
		if found > 0 {
			continue
		}
		if _, err := e.s.w.ExecContext(ctx, `INSERT INTO `+fts+` (`+fts+`, rank) VALUES ('integrity-check', 1)`); err != nil {
			add(crawlkeeper.Violation{Kind: "search_index", Message: fmt.Sprintf("the full-text index of %s does not match the records' search text (%v): run crawlkeeper search --reindex", table, err)})
		}
	}
	return nil
}
