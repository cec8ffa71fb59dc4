package sqlstore

import (
	"context"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
)

// Defaults holds the Engine methods most engines answer alike. An engine
// embeds it and defines only the ones where it differs; each says below
// which engines override it.
type Defaults struct{}

// Upsert is INSERT ... ON CONFLICT (MySQL has its own).
func (Defaults) Upsert(table string, cols []string, nkey int) string {
	set := Map(cols[nkey:], func(c string) string { return c + " = excluded." + c })
	return "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES (" + In(len(cols)) + ") ON CONFLICT (" +
		strings.Join(cols[:nkey], ", ") + ") DO UPDATE SET " + strings.Join(set, ", ")
}

// ForUpdate row-locks what a SELECT reads (SQLite, with one writer, needs
// no lock).
func (Defaults) ForUpdate() string { return " FOR UPDATE" }

// SumInt is coalesce(sum(...), 0) (PostgreSQL casts the numeric sum).
func (Defaults) SumInt(expr string) string { return "coalesce(sum(" + expr + "), 0)" }

// StoredBytes is length() (PostgreSQL counts compressed storage).
func (Defaults) StoredBytes(col string) string { return "length(" + col + ")" }

// Greatest is GREATEST (SQLite's is max).
func (Defaults) Greatest() string { return "GREATEST" }

// NextIDQuery reads the counter row meta.next_id (PostgreSQL has a
// sequence).
func (Defaults) NextIDQuery() string { return `SELECT value FROM meta WHERE name = 'next_id'` }

// DueFrom reads active without an index hint (SQLite and MySQL name the
// rule's index).
func (Defaults) DueFrom(string) string { return "active" }

// DueAfter is a row value, one range of the (column, id) index (MySQL
// spells it as an OR).
func (Defaults) DueAfter(col string, at, id int64) (string, []any) {
	return "(" + col + ", id) > (?, ?)", []any{at, id}
}

// ReleaseKeys deletes the keys' rows of record_keys (SQLite keeps none).
func (Defaults) ReleaseKeys(ctx context.Context, tx Querier, keys []string) error {
	return Chunks(keys, func(c []string) error {
		_, err := tx.Exec(ctx, "DELETE FROM record_keys WHERE `key` IN ("+In(len(c))+")", Args(c)...)
		return err
	})
}

// SearchCols is the search text alone (PostgreSQL adds its text search
// configuration).
func (Defaults) SearchCols() string { return "search_text" }

// SearchArgs is the search text as it is (MySQL encodes it, PostgreSQL
// adds its configuration).
func (Defaults) SearchArgs(r *crawlkeeper.Record) []any { return []any{r.SearchText} }

// SearchDest scans the search text alone (PostgreSQL adds its
// configuration).
func (Defaults) SearchDest(dest []any, v *SearchScan) []any { return append(dest, &v.Text) }

// SearchRead takes the search text as stored (MySQL decodes its own).
func (Defaults) SearchRead(v *SearchScan, r *crawlkeeper.Record) {
	if v.Text.Valid {
		r.SearchText = v.Text.String
	}
}

// CompressArchive is true: archived payloads are zstd frames (PostgreSQL
// compresses large values itself).
func (Defaults) CompressArchive() bool { return true }

// MonitorName is bytes: the monitor's name columns are binary (SQLite's
// are TEXT).
func (Defaults) MonitorName(name string) any { return []byte(name) }

// MonitorChunk is 0: a row holds a whole body (MySQL splits bodies larger
// than a statement).
func (Defaults) MonitorChunk() int { return 0 }
