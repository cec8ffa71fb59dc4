// Package rawsql holds the hand-written queries of the benchmark's raw
// baselines that two programs share: package rawbench runs them in the
// benchmark's process, and the minimal program rawcli runs them in a
// fresh one (search_cli_ms). It imports only the standard library, so the
// minimal program stays minimal.
package rawsql

import "strings"

// Query is one full-text query of the search benchmark.
type Query struct {
	Words  []string
	Phrase bool   // the words as one phrase
	Source string // only records of this source, when set
	Limit  int
}

// SQLiteSearch is the query an application would write by hand against
// the FTS5 index, best BM25 rank first, whole rows.
func SQLiteSearch(q Query) (string, []any) {
	match := strings.Join(q.Words, " ")
	if q.Phrase {
		match = `"` + match + `"`
	}
	s := `SELECT a.* FROM active_search JOIN active a ON a.id = active_search.rowid WHERE active_search MATCH ?`
	args := []any{match}
	if q.Source != "" {
		s += ` AND a.source = ?`
		args = append(args, q.Source)
	}
	s += ` ORDER BY active_search.rank LIMIT ?`
	return s, append(args, q.Limit)
}

// PostgresSearch is the query an application would write by hand against
// the GIN index, best ts_rank first, whole rows.
func PostgresSearch(q Query) (string, []any) {
	sep := " & "
	if q.Phrase {
		sep = " <-> "
	}
	s := `SELECT * FROM active WHERE search_tsv @@ to_tsquery('simple', $1)`
	args := []any{strings.Join(q.Words, sep), q.Limit}
	if q.Source != "" {
		s += ` AND source = $3`
		args = append(args, q.Source)
	}
	return s + ` ORDER BY ts_rank(search_tsv, to_tsquery('simple', $1)) DESC LIMIT $2`, args
}

// MySQLSearch is the query an application would write by hand against
// the FULLTEXT index (on the schema's suffixed tokens), best relevance
// first, whole rows.
func MySQLSearch(q Query) (string, []any) {
	toks := make([]string, len(q.Words))
	for i, w := range q.Words {
		toks[i] = w + "__"
	}
	against := "+" + strings.Join(toks, " +")
	if q.Phrase {
		against = `+"` + strings.Join(toks, " ") + `"`
	}
	s := `SELECT * FROM active WHERE MATCH (search_text) AGAINST (? IN BOOLEAN MODE)`
	args := []any{against}
	if q.Source != "" {
		s += ` AND source = ?`
		args = append(args, q.Source)
	}
	s += ` ORDER BY MATCH (search_text) AGAINST (? IN BOOLEAN MODE) DESC LIMIT ?`
	return s, append(args, against, q.Limit)
}

// Count is the query of the minimal program's count: the active records.
const Count = `SELECT count(*) FROM active`
