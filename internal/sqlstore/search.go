package sqlstore

import (
	"context"
	"database/sql"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
)

// Searcher is an engine's full-text search.
type Searcher interface {
	// CheckSearch verifies the engine's full-text index against the
	// records and hands each violation to add.
	CheckSearch(ctx context.Context, add func(crawlkeeper.Violation)) error
}

// PrefixCols qualifies every column of a comma-separated list with alias,
// for the search queries that join a full-text match to the records.
func PrefixCols(cols, alias string) string {
	parts := strings.Split(cols, ", ")
	for i, p := range parts {
		parts[i] = alias + "." + p
	}
	return strings.Join(parts, ", ")
}

// CountRows reads every column of every row, as an application would, and
// counts the rows: the search benchmark's raw baselines end with it.
func CountRows(rows *sql.Rows, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}
