package sqlstore

import (
	"context"
	"strings"
)

// Bulk writes many rows with few statements, each engine in its own
// shape: SQLite runs one prepared statement per row (a statement costs no
// round trip in process), PostgreSQL one statement over unnest() arrays,
// MySQL multi-row VALUES and UPDATE ... JOIN over a derived table. Row
// values are typed Go values: int64, *int64, bool, string, *string,
// []byte, JSONText and *JSONText.
type Bulk interface {
	// Insert writes rows of cols into table. With key > 0, the first key
	// columns are the table's primary key, and a row whose key exists
	// replaces it.
	Insert(ctx context.Context, tx Querier, table string, cols []string, rows [][]any, key int) error
	// Update sets the columns set of every row of table that matches a
	// row of rows on the columns match (each row holds the match values,
	// then the set values). It returns how many rows matched.
	Update(ctx context.Context, tx Querier, table string, match, set []string, rows [][]any) (int64, error)
	// Delete deletes from table the rows that satisfy, for some row of
	// rows, every condition of conds: a column and a comparison ("id =",
	// "version <=") against that row's value.
	Delete(ctx context.Context, tx Querier, table string, conds []string, rows [][]any) error
}

// Split splits a column list ("a, b, c") into names.
func Split(cols string) []string { return strings.Split(cols, ", ") }

// DeleteOn splits Bulk.Delete conditions into their columns and the
// comparisons of a row of the table t with a row to delete u, as
// "t.col op u.col".
func DeleteOn(conds []string) (cols, on []string) {
	cols, on = make([]string, len(conds)), make([]string, len(conds))
	for i, c := range conds {
		j := strings.LastIndexByte(c, ' ')
		cols[i] = c[:j]
		on[i] = "t." + cols[i] + " " + c[j+1:] + " u." + cols[i]
	}
	return cols, on
}

// RowBytes estimates what a row of values takes in a statement: text and
// bytes twice (escaped on the wire by some engines), 16 bytes for other
// values.
func RowBytes(row []any) int {
	n := 0
	for _, v := range row {
		switch x := v.(type) {
		case string:
			n += 2 * len(x)
		case *string:
			if x != nil {
				n += 2 * len(*x)
			}
		case []byte:
			n += 2 * len(x)
		case JSONText:
			n += 2 * len(x)
		case *JSONText:
			if x != nil {
				n += 2 * len(*x)
			}
		}
		n += 16
	}
	return n
}

// ChunkRows splits rows into runs of at most maxRows rows and maxBytes
// bytes (RowBytes), each holding at least one row.
func ChunkRows(rows [][]any, maxRows, maxBytes int) [][][]any {
	return ChunkBy(rows, maxRows, maxBytes, RowBytes)
}

// ChunkBy splits xs into runs of at most maxRows elements and maxBytes
// bytes by size, each holding at least one element.
func ChunkBy[T any](xs []T, maxRows, maxBytes int, size func(T) int) [][]T {
	var out [][]T
	start, bytes := 0, 0
	for i, x := range xs {
		n := size(x)
		if i > start && (bytes+n > maxBytes || i-start == maxRows) {
			out = append(out, xs[start:i])
			start, bytes = i, 0
		}
		bytes += n
	}
	if start < len(xs) {
		out = append(out, xs[start:])
	}
	return out
}
