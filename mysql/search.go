package mysql

import (
	"context"
	"fmt"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
)

// Full-text search runs on an InnoDB FULLTEXT index over search_text
// (migration 010), queried with MATCH … AGAINST in boolean mode. The
// search text is folded and tokenised in Go (crawlkeeper.SearchText) and
// stored with each token followed by searchSuffix, so the default
// full-text parser indexes every token whatever its length, script or
// the server's stop word list, and MySQL and MariaDB find what the other
// stores find.

var _ crawlkeeper.SearchStore = (*Store)(nil)

// searchSuffix follows every stored token. Folded tokens are letters,
// digits and marks only, so the suffix never occurs inside one, and the
// parser counts "_" as a word character.
const searchSuffix = "__"

// encodeSearchText returns the stored form of a search text.
func encodeSearchText(s string) string {
	if s == "" {
		return ""
	}
	return strings.ReplaceAll(s, " ", searchSuffix+" ") + searchSuffix
}

// decodeSearchText is the inverse of encodeSearchText.
func decodeSearchText(s string) string { return strings.ReplaceAll(s, searchSuffix, "") }

// matchAgainst renders a parsed query for MATCH … AGAINST in boolean mode:
// +token__ for a word, +"a__ b__" for a phrase, +pre* for a prefix, and -
// for an excluded term. InnoDB has no prefix inside a phrase; such a term
// is rendered as its words (a superset) and returned with the regular
// expressions that make the match exact.
func matchAgainst(e *crawlkeeper.SearchExpr) (against string, exact []crawlkeeper.SearchTerm) {
	var parts []string
	for _, t := range e.Terms {
		toks := make([]string, len(t.Tokens))
		for i, tok := range t.Tokens {
			toks[i] = tok + searchSuffix
		}
		if t.Prefix {
			toks[len(toks)-1] = t.Tokens[len(toks)-1] + "*"
		}
		switch {
		case len(toks) == 1 && t.Exclude:
			parts = append(parts, "-"+toks[0])
		case len(toks) == 1:
			parts = append(parts, "+"+toks[0])
		case t.Prefix:
			exact = append(exact, t)
			if !t.Exclude {
				for _, tok := range toks {
					parts = append(parts, "+"+tok)
				}
			}
		case t.Exclude:
			parts = append(parts, `-"`+strings.Join(toks, " ")+`"`)
		default:
			parts = append(parts, `+"`+strings.Join(toks, " ")+`"`)
		}
	}
	return strings.Join(parts, " "), exact
}

// searchSQL renders a search plan as one query and its arguments.
func searchSQL(p *crawlkeeper.SearchPlan) (string, []any) {
	table, cols := "active", recordCols
	if p.Archived {
		table, cols = "archive", archiveCols
	}
	against, exact := matchAgainst(p.Expr)
	match := `MATCH (search_text) AGAINST (? IN BOOLEAN MODE)`
	where := []string{match}
	args := []any{against}
	filter := func(cond string, a ...any) {
		where = append(where, cond)
		args = append(args, a...)
	}
	for _, t := range exact {
		op := "REGEXP"
		if t.Exclude {
			op = "NOT REGEXP"
		}
		filter("search_text "+op+" ?", t.Regexp(searchSuffix))
	}
	if p.Source != "" {
		filter("source = ?", p.Source)
	}
	if p.Round != "" {
		filter("last_round = ?", p.Round)
	}
	if p.Target != "" {
		filter("last_target = ?", p.Target)
	}
	if !p.Since.IsZero() {
		filter("last_updated_at >= ?", p.Since.UnixMicro())
	}
	if !p.Until.IsZero() {
		filter("last_updated_at < ?", p.Until.UnixMicro())
	}
	if !p.EventFrom.IsZero() {
		filter("event_at >= ?", p.EventFrom.UnixMicro())
	}
	if !p.EventTo.IsZero() {
		filter("event_at < ?", p.EventTo.UnixMicro())
	}
	if p.Order == crawlkeeper.SearchNewest {
		if c := p.After; c != nil {
			filter("(last_updated_at < ? OR (last_updated_at = ? AND id < ?))", c.UpdatedMicros, c.UpdatedMicros, c.ID)
		}
		args = append(args, p.Limit+1)
		return `SELECT ` + cols + `, 0 FROM ` + table + ` WHERE ` + strings.Join(where, " AND ") +
			` ORDER BY last_updated_at DESC, id DESC LIMIT ?`, args
	}
	// InnoDB's relevance (TF-IDF) does not depend on the document's
	// length, so it is divided by one plus the logarithm of the length, as
	// PostgreSQL's ts_rank normalization 1 does: a record whose title is
	// the query outranks a long one that mentions the same words. It is
	// computed once per matching row in the inner query; the page's rows
	// are then read by primary key.
	inner := `SELECT id, ` + match + ` / (1 + LN(1 + LENGTH(search_text))) AS score FROM ` + table + ` WHERE ` + strings.Join(where, " AND ")
	args = append([]any{against}, args...)
	cursor := ""
	if c := p.After; c != nil {
		cursor = ` WHERE score < ? OR (score = ? AND id > ?)`
		args = append(args, c.Score, c.Score, c.ID)
	}
	args = append(args, p.Limit+1)
	return `SELECT ` + sqlstore.PrefixCols(cols, "t") + `, m.score FROM (SELECT id, score FROM (` + inner + `) r` + cursor +
		` ORDER BY score DESC, id LIMIT ?) m JOIN ` + table + ` t ON t.id = m.id ORDER BY m.score DESC, m.id`, args
}

// Search implements crawlkeeper.SearchStore.
func (s *Store) Search(ctx context.Context, q crawlkeeper.SearchQuery) (*crawlkeeper.SearchPage, error) {
	p, err := q.Plan()
	if err != nil {
		return nil, err
	}
	query, args := searchSQL(p)
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.wrap("search", err)
	}
	defer rows.Close()
	var hits []crawlkeeper.SearchHit
	for rows.Next() {
		var score float64
		r, err := scanRecord(extraScanner{rows, []any{&score}}, p.Archived)
		if err != nil {
			return nil, s.wrap("search", err)
		}
		hits = append(hits, crawlkeeper.SearchHit{Record: r, Score: score})
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("search", err)
	}
	return p.FinishPage(hits), nil
}

type extraScanner struct {
	row   rowScanner
	extra []any
}

func (e extraScanner) Scan(dest ...any) error { return e.row.Scan(append(dest, e.extra...)...) }

// SetSearchText implements crawlkeeper.SearchStore.
func (s *Store) SetSearchText(ctx context.Context, updates []crawlkeeper.SearchTextUpdate) (int, error) {
	n := 0
	for _, archived := range []bool{false, true} {
		table := "active"
		if archived {
			table = "archive"
		}
		var args []any
		rows := 0
		for _, u := range updates {
			if u.Archived == archived {
				args = append(args, u.ID, u.Version, encodeSearchText(u.Text))
				rows++
			}
		}
		for rows > 0 {
			k := min(rows, maxRows)
			q := `UPDATE ` + table + ` t JOIN ` + derived([]string{"id", "version", "search_text"}, k) + ` u ON t.id = u.id AND t.version = u.version SET t.search_text = u.search_text`
			res, err := s.db.ExecContext(ctx, q, args[:3*k]...)
			if err != nil {
				return n, s.wrap("set search text", err)
			}
			c, _ := res.RowsAffected()
			n += int(c)
			args, rows = args[3*k:], rows-k
		}
	}
	return n, nil
}

// checkSearch lists the records written before search existed and checks
// that both FULLTEXT indexes exist; InnoDB maintains their entries itself.
func (s *Store) checkSearch(ctx context.Context, add func(crawlkeeper.Violation)) error {
	for _, table := range []string{"active", "archive"} {
		var n int
		err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.STATISTICS
			WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND INDEX_NAME = ? AND INDEX_TYPE = 'FULLTEXT'`, table, table+"_search").Scan(&n)
		if err != nil {
			return fmt.Errorf("check search: %w", err)
		}
		if n == 0 {
			add(crawlkeeper.Violation{Kind: "search_index", Message: fmt.Sprintf("the FULLTEXT index %s_search is missing: recreate it with ALTER TABLE %s ADD FULLTEXT INDEX %s_search (search_text)", table, table, table)})
		}
		rows, err := s.db.QueryContext(ctx, "SELECT id, `key` FROM "+table+` WHERE search_text IS NULL LIMIT 1000`)
		if err != nil {
			return fmt.Errorf("check search: %w", err)
		}
		for rows.Next() {
			var id int64
			var key string
			if err := rows.Scan(&id, &key); err != nil {
				rows.Close()
				return fmt.Errorf("check search: %w", err)
			}
			add(crawlkeeper.SearchMissing(table, id, key))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("check search: %w", err)
		}
	}
	return nil
}
