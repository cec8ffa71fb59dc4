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

// The record columns the raw baselines write and the raw moves copy from
// active to the archive, as each engine spells them: the record's, then
// (PostgreSQL) its text search configuration, then FetchCols.
const (
	SQLiteCols   = sqlBaseCols + `, ` + FetchCols
	PostgresCols = sqlBaseCols + `, search_config, ` + FetchCols
	MySQLCols    = "id, `key`" + sqlRestCols + `, ` + FetchCols
	sqlBaseCols  = `id, key` + sqlRestCols
	sqlRestCols  = `, key_parts, source, title, url, item, content_hash, crawled_at, last_updated_at, last_changed_at, version, event_at, date_errors, processed_at, processed_version, processed_chain, derived, search_text`
)

// FetchCols are the recrawl advisor's delivery counters, which
// crawlkeeper's ingest keeps on every record: zero for a new record, and
// on each delivery one more refetch, with the interval since
// last_updated_at added to the changed or unchanged total (and its
// logarithm in seconds, at least 1, to the changed one). The raw writes
// keep them alike (FetchZero, TouchSet, ChangeSet), so that both sides do
// the same work.
const FetchCols = `fetch_refetches, fetch_changes, fetch_changed_us, fetch_unchanged_us, fetch_changed_log`

// FetchZero returns the FetchCols values of a new record.
func FetchZero() []any { return []any{int64(0), int64(0), int64(0), int64(0), float64(0)} }

// TouchSet is the SET list of an unchanged delivery at the time of the
// placeholder at (used twice), with the engine's two-argument maximum
// greatest. The counters come first: MySQL evaluates the assignments in
// order, each seeing the ones before it.
func TouchSet(greatest, at string) string {
	return `fetch_refetches = fetch_refetches + 1, fetch_unchanged_us = fetch_unchanged_us + ` + greatest + `(` + at + ` - last_updated_at, 0), last_updated_at = ` + at
}

// ChangeSet is the counters' part of the SET list of a changed delivery
// whose new last_updated_at is the expression at, to come before
// last_updated_at's own assignment (see TouchSet); old prefixes the
// stored row's columns ("a." or "").
func ChangeSet(greatest, old, at string) string {
	d := greatest + `(` + at + ` - ` + old + `last_updated_at, 0)`
	return `fetch_refetches = ` + old + `fetch_refetches + 1, fetch_changes = ` + old + `fetch_changes + 1, fetch_changed_us = ` + old + `fetch_changed_us + ` + d +
		`, fetch_changed_log = ` + old + `fetch_changed_log + ln(` + greatest + `(` + d + ` / 1e6, 1))`
}

// AgeSelect is what an age rule selects, through the crawled_at index, in
// its order: the raw selection of archive_pass_ms.
const AgeSelect = `SELECT id FROM active WHERE crawled_at <= ? ORDER BY crawled_at, id`

// MoveBatch is how many records one raw move statement moves.
const MoveBatch = 1000

// MoveSQL returns the two statements that move the records of n ids
// (placeholders ?, after the archived_at one of the first) from active to
// the archive, with the engine's column spelling cols.
func MoveSQL(cols string, n int) (insert, del string) {
	in := "(?" + strings.Repeat(",?", n-1) + ")"
	return `INSERT INTO archive (` + cols + `, item_bytes, archived_at, archive_reason) SELECT ` + cols + `, length(item), ?, 'age' FROM active WHERE id IN ` + in,
		`DELETE FROM active WHERE id IN ` + in
}

// Derived is the processing result ProcessPage writes for record id: a
// small JSON object, as a processor's would be.
func Derived(id int64, at int64) []byte {
	return []byte(`{"raw":{"id":` + itoa(id) + `,"at":` + itoa(at) + `}}`)
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
