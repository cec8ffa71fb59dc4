package mysql

import "strings"

// list returns n comma-separated placeholders.
func list(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?,", n-1) + "?"
}

// tuples returns n parenthesised groups of width placeholders, for a
// multi-row INSERT.
func tuples(n, width int) string {
	t := "(" + list(width) + ")"
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
	row := " UNION ALL SELECT " + list(len(cols))
	for i := 1; i < n; i++ {
		b.WriteString(row)
	}
	b.WriteString(")")
	return b.String()
}

// maxRows bounds the rows of one multi-row statement, so the server's
// parser and the derived tables stay small.
const maxRows = 1000

// chunks splits xs into runs of at most maxRows elements and at most
// budget bytes by size, each holding at least one element.
func chunks[T any](xs []T, budget int, size func(T) int) [][]T {
	var out [][]T
	start, bytes := 0, 0
	for i, x := range xs {
		n := size(x)
		if i > start && (bytes+n > budget || i-start == maxRows) {
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

// int64s returns xs as statement arguments.
func int64s(xs []int64) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// strs returns xs as statement arguments.
func strs(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
