package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
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
func searchConfig(lang string) string {
	if lang == "" {
		return "simple"
	}
	return lang
}

// searchTextArg is the search_text value of r: never NULL once a record
// is written by a version that knows search.
func searchTextArg(r *crawlkeeper.Record) *string {
	s := r.SearchText
	return &s
}

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

// searchSQL renders a search plan as one query and its arguments. The
// tsquery is the OR of the query parsed with each configuration in use, so
// a record indexed with its source's language matches its own stems.
func searchSQL(p *crawlkeeper.SearchPlan) (string, []any) {
	table, cols := "active", recordCols
	if p.Archived {
		table, cols = "archive", archiveCols
	}
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	text := arg(tsqueryText(p.Expr))
	langs := p.Languages
	if len(langs) == 0 {
		langs = []string{"simple"}
	}
	var tsq []string
	for _, l := range langs {
		tsq = append(tsq, "to_tsquery("+arg(searchConfig(l))+"::regconfig, "+text+")")
	}
	query := strings.Join(tsq, " || ")
	where := []string{"search_tsv @@ q.q"}
	if p.Source != "" {
		where = append(where, "source = "+arg(enc(p.Source)))
	}
	if p.Round != "" {
		where = append(where, "last_round = "+arg(enc(p.Round)))
	}
	if p.Target != "" {
		where = append(where, "last_target = "+arg(enc(p.Target)))
	}
	if !p.Since.IsZero() {
		where = append(where, "last_updated_at >= "+arg(p.Since.UnixMicro()))
	}
	if !p.Until.IsZero() {
		where = append(where, "last_updated_at < "+arg(p.Until.UnixMicro()))
	}
	if !p.EventFrom.IsZero() {
		where = append(where, "event_at >= "+arg(p.EventFrom.UnixMicro()))
	}
	if !p.EventTo.IsZero() {
		where = append(where, "event_at < "+arg(p.EventTo.UnixMicro()))
	}
	tcols := sqlstore.PrefixCols(cols, "t")
	if p.Order == crawlkeeper.SearchNewest {
		if c := p.After; c != nil {
			u, id := arg(c.UpdatedMicros), arg(c.ID)
			where = append(where, "(last_updated_at < "+u+" OR (last_updated_at = "+u+" AND id < "+id+"))")
		}
		return `SELECT ` + tcols + `, 0::float8 FROM ` + table + ` t, (SELECT ` + query + ` AS q) q WHERE ` +
			strings.Join(where, " AND ") + ` ORDER BY last_updated_at DESC, id DESC LIMIT ` + arg(p.Limit+1), args
	}
	// The rank divides by the document's length (normalization 1, by one
	// plus its logarithm), so a record whose title is the query outranks
	// a long one that mentions the same words.
	rank := "ts_rank(search_tsv, q.q, 1)::float8"
	cursor := ""
	if c := p.After; c != nil {
		s, id := arg(c.Score), arg(c.ID)
		cursor = " WHERE score < " + s + " OR (score = " + s + " AND id > " + id + ")"
	}
	limit := arg(p.Limit + 1)
	return `SELECT ` + tcols + `, m.score FROM (SELECT id, score FROM (SELECT id, ` + rank + ` AS score FROM ` + table + `, (SELECT ` + query + ` AS q) q WHERE ` +
		strings.Join(where, " AND ") + `) r` + cursor + ` ORDER BY score DESC, id LIMIT ` + limit + `) m JOIN ` + table +
		` t ON t.id = m.id ORDER BY m.score DESC, m.id`, args
}

// Search implements crawlkeeper.SearchStore.
func (s *Store) Search(ctx context.Context, q crawlkeeper.SearchQuery) (*crawlkeeper.SearchPage, error) {
	p, err := q.Plan()
	if err != nil {
		return nil, err
	}
	query, args := searchSQL(p)
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, s.wrap("search", err)
	}
	defer rows.Close()
	var hits []crawlkeeper.SearchHit
	for rows.Next() {
		var score float64
		r, err := scanRecord(extraRow{rows, []any{&score}}, p.Archived)
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

// extraRow scans a record row followed by extra columns.
type extraRow struct {
	row   interface{ Scan(dest ...any) error }
	extra []any
}

func (e extraRow) Scan(dest ...any) error { return e.row.Scan(append(dest, e.extra...)...) }

// SetSearchText implements crawlkeeper.SearchStore: one multi-row UPDATE
// per table, conditioned on each record's version.
func (s *Store) SetSearchText(ctx context.Context, updates []crawlkeeper.SearchTextUpdate) (int, error) {
	n := 0
	for _, archived := range []bool{false, true} {
		var ids, versions []int64
		var texts, configs []string
		for _, u := range updates {
			if u.Archived == archived {
				ids, versions = append(ids, u.ID), append(versions, u.Version)
				texts, configs = append(texts, u.Text), append(configs, searchConfig(u.Language))
			}
		}
		if len(ids) == 0 {
			continue
		}
		table := "active"
		if archived {
			table = "archive"
		}
		tag, err := s.pool.Exec(ctx, `UPDATE `+table+` a SET search_text = u.text, search_config = u.config
			FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[]) AS u(id, version, text, config)
			WHERE a.id = u.id AND a.version = u.version`, ids, versions, texts, configs)
		if err != nil {
			return n, s.wrap("set search text", err)
		}
		n += int(tag.RowsAffected())
	}
	return n, nil
}

// checkSearch lists the records written before search existed, and checks
// that both GIN indexes exist and are valid (an index left invalid by a
// failed concurrent build is not used and not kept up to date). The
// generated column cannot disagree with search_text, so there are no
// orphan entries to look for.
func (s *Store) checkSearch(ctx context.Context, add func(crawlkeeper.Violation)) error {
	for _, table := range []string{"active", "archive"} {
		var valid bool
		err := s.pool.QueryRow(ctx, `SELECT coalesce(bool_and(i.indisvalid AND i.indisready), false) FROM pg_index i
			JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace`, table+"_search").Scan(&valid)
		if err != nil {
			return fmt.Errorf("check search: %w", err)
		}
		if !valid {
			add(crawlkeeper.Violation{Kind: "search_index", Message: fmt.Sprintf("the full-text index %s_search is missing or invalid: recreate it with REINDEX INDEX %s_search", table, table)})
		}
		rows, err := s.pool.Query(ctx, `SELECT id, key FROM `+table+` WHERE search_text IS NULL LIMIT 1000`)
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
			add(crawlkeeper.SearchMissing(table, id, dec(key)))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("check search: %w", err)
		}
	}
	return nil
}
