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
	var b strings.Builder
	b.WriteString("(SELECT ")
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("? AS ")
		b.WriteString(c)
	}
	row := " UNION ALL SELECT " + sqlstore.In(len(cols))
	for i := 1; i < n; i++ {
		b.WriteString(row)
	}
	b.WriteString(")")
	return b.String()
}

// maxRows bounds the rows of one multi-row statement, so the server's
// parser and the derived tables stay small.
const maxRows = 1000
