package mysql

import (
	"strings"

	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
)

// tuples returns n parenthesised groups of width placeholders, for a
// multi-row INSERT.
func tuples(n, width int) string {
	t := "(" + sqlstore.In(width) + ")"
	return strings.Repeat(t+",", n-1) + t
}

// derived returns a derived table of n rows with the named columns, as
// SELECT ... UNION ALL SELECT ...: the one multi-row table literal that
// MySQL and MariaDB both accept (their VALUES constructors differ).
func derived(cols []string, n int) string {
	first := make([]string, len(cols))
	for i, c := range cols {
		first[i] = "? AS " + c
	}
	return "(SELECT " + strings.Join(first, ", ") + strings.Repeat(" UNION ALL SELECT "+sqlstore.In(len(cols)), n-1) + ")"
}

// maxRows bounds the rows of one multi-row statement, so the server's
// parser and the derived tables stay small.
const maxRows = 1000
