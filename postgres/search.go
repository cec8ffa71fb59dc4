package postgres

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
)

// Full-text search runs on a tsvector column generated from each record's
// search_text (migration 010) with a GIN index: PostgreSQL maintains both
// in the same statement as every write of the record, so the index never
// drifts. The search text is folded and tokenised in Go
// (crawlkeeper.SearchText) and indexed with the 'simple' configuration,
// so PostgreSQL finds what the other stores find; a source with
// search_language set is indexed with that configuration instead
// (stemming, stop words), and its queries are parsed with it.

var _ crawlkeeper.SearchStore = (*Store)(nil)

// searchConfig is the stored configuration of a record's search text.
func searchConfig(lang string) string { return cmp.Or(lang, "simple") }

// tsqueryText renders a parsed query in to_tsquery syntax: a phrase's
// tokens joined by <->, a prefix ending in :*, excluded terms negated with
// !, all terms joined by &. Tokens are letters and digits only; quoting
// each keeps to_tsquery from reading anything in them as an operator.
func tsqueryText(e *crawlkeeper.SearchExpr) string {
	terms := make([]string, 0, len(e.Terms))
	for _, t := range e.Terms {
		toks := make([]string, len(t.Tokens))
		for i, tok := range t.Tokens {
			toks[i] = "'" + strings.ReplaceAll(strings.ReplaceAll(tok, `\`, `\\`), "'", "''") + "'"
		}
		if t.Prefix {
			toks[len(toks)-1] += ":*"
		}
		s := strings.Join(toks, " <-> ")
		if len(toks) > 1 {
			s = "(" + s + ")"
		}
		if t.Exclude {
			s = "!" + s
		}
		terms = append(terms, s)
	}
	return strings.Join(terms, " & ")
}

// SearchSQL implements sqlstore.Searcher. The tsquery is the OR of the
// query parsed with each configuration in use, so a record indexed with
// its source's language matches its own stems.
func (engine) SearchSQL(p *crawlkeeper.SearchPlan, table, cols string, where []string, args []any) (string, []any) {
	text := tsqueryText(p.Expr)
	langs := p.Languages
	if len(langs) == 0 {
		langs = []string{"simple"}
	}
	var tsq []string
	var qargs []any
	for _, l := range langs {
		tsq = append(tsq, "to_tsquery(?::regconfig, ?)")
		qargs = append(qargs, searchConfig(l), text)
	}
	query := strings.Join(tsq, " || ")
	where = append([]string{"search_tsv @@ q.q"}, where...)
	args = append(qargs, args...)
	if p.Order == crawlkeeper.SearchNewest {
		return `SELECT ` + cols + `, 0::float8 FROM ` + table + ` t, (SELECT ` + query + ` AS q) q WHERE ` +
			strings.Join(where, " AND ") + ` ORDER BY last_updated_at DESC, id DESC LIMIT ?`, append(args, p.Limit+1)
	}
	// The rank divides by the document's length (normalization 1, by one
	// plus its logarithm), so a record whose title is the query outranks
	// a long one that mentions the same words.
	rank := "ts_rank(search_tsv, q.q, 1)::float8"
	cursor := ""
	if c := p.After; c != nil {
		cursor = " WHERE score < ? OR (score = ? AND id > ?)"
		args = append(args, c.Score, c.Score, c.ID)
	}
	return `SELECT ` + cols + `, m.score FROM (SELECT id, score FROM (SELECT id, ` + rank + ` AS score FROM ` + table + `, (SELECT ` + query + ` AS q) q WHERE ` +
		strings.Join(where, " AND ") + `) r` + cursor + ` ORDER BY score DESC, id LIMIT ?) m JOIN ` + table +
		` t ON t.id = m.id ORDER BY m.score DESC, m.id`, append(args, p.Limit+1)
}

// CheckSearch lists the records written before search existed, and checks
// that both GIN indexes exist and are valid (an index left invalid by a
// failed concurrent build is not used and not kept up to date). The
// generated column cannot disagree with search_text, so there are no
// orphan entries to look for.
func (e engine) CheckSearch(ctx context.Context, add func(crawlkeeper.Violation)) error {
	for _, table := range []string{"active", "archive"} {
		var valid bool
		err := e.s.pool.QueryRow(ctx, `SELECT coalesce(bool_and(i.indisvalid AND i.indisready), false) FROM pg_index i
			JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace`, table+"_search").Scan(&valid)
		if err != nil {
			return fmt.Errorf("check search: %w", err)
		}
		if !valid {
			add(crawlkeeper.Violation{Kind: "search_index", Message: fmt.Sprintf("the full-text index %s_search is missing or invalid: recreate it with REINDEX INDEX %s_search", table, table)})
		}
		if err := e.s.SearchTextMissing(ctx, table, add); err != nil {
			return e.Wrap("check search", err)
		}
	}
	return nil
}
