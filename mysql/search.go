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
		toks := sqlstore.Map(t.Tokens, func(tok string) string { return tok + searchSuffix })
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

// SearchSQL implements sqlstore.Searcher.
func (engine) SearchSQL(p *crawlkeeper.SearchPlan, table, cols string, where []string, args []any) (string, []any) {
	against, exact := matchAgainst(p.Expr)
	match := `MATCH (search_text) AGAINST (? IN BOOLEAN MODE)`
	pre, preArgs := []string{match}, []any{against}
	for _, t := range exact {
		op := "REGEXP"
		if t.Exclude {
			op = "NOT REGEXP"
		}
		pre = append(pre, "search_text "+op+" ?")
		preArgs = append(preArgs, t.Regexp(searchSuffix))
	}
	where, args = append(pre, where...), append(preArgs, args...)
	if p.Order == crawlkeeper.SearchNewest {
		return `SELECT ` + cols + `, 0 FROM ` + table + ` t WHERE ` + strings.Join(where, " AND ") +
			` ORDER BY last_updated_at DESC, id DESC LIMIT ?`, append(args, p.Limit+1)
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
	return `SELECT ` + cols + `, m.score FROM (SELECT id, score FROM (` + inner + `) r` + cursor +
		` ORDER BY score DESC, id LIMIT ?) m JOIN ` + table + ` t ON t.id = m.id ORDER BY m.score DESC, m.id`, append(args, p.Limit+1)
}

// CheckSearch lists the records written before search existed and checks
// that both FULLTEXT indexes exist; InnoDB maintains their entries itself.
func (e engine) CheckSearch(ctx context.Context, add func(crawlkeeper.Violation)) error {
	for _, table := range []string{"active", "archive"} {
		var n int
		err := e.s.db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.STATISTICS
			WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND INDEX_NAME = ? AND INDEX_TYPE = 'FULLTEXT'`, table, table+"_search").Scan(&n)
		if err != nil {
			return fmt.Errorf("check search: %w", err)
		}
		if n == 0 {
			add(crawlkeeper.Violation{Kind: "search_index", Message: fmt.Sprintf("the FULLTEXT index %s_search is missing: recreate it with ALTER TABLE %s ADD FULLTEXT INDEX %s_search (search_text)", table, table, table)})
		}
		if err := e.s.SearchTextMissing(ctx, table, add); err != nil {
			return e.Wrap("check search", err)
		}
	}
	return nil
}
