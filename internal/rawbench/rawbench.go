// Package rawbench holds the baselines of `crawlkeeper bench`: the same
// work a crawlkeeper hot path does, written by hand against the engine
// underneath (one file per engine), on the store's own schema and
// connection. It is internal and used by the benchmark only, so the
// production stores carry no benchmark methods; it reaches each engine
// through the store's handle accessor (DB, Pool, Database).
package rawbench

import (
	"database/sql"
	"fmt"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/bench"
	"github.com/crawlkeeper/crawlkeeper/mongodb"
	"github.com/crawlkeeper/crawlkeeper/mysql"
	"github.com/crawlkeeper/crawlkeeper/postgres"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

// For returns the raw baselines of st's engine.
func For(st crawlkeeper.Store) (bench.Raw, error) {
	switch s := st.(type) {
	case *sqlite.Store:
		return &sqliteRaw{w: s.DB(), r: s.ReadDB()}, nil
	case *postgres.Store:
		return &pgRaw{pool: s.Pool()}, nil
	case *mysql.Store:
		return &mysqlRaw{db: s.DB()}, nil
	case *mongodb.Store:
		return newMongoRaw(s.Database()), nil
	}
	return nil, crawlkeeper.Errorf(crawlkeeper.ENOTSUPPORTED, "the benchmark has no raw baselines for a %T store", st)
}

// placeholders returns n comma-separated groups of width "?".
func placeholders(n, width int) string {
	one := "(?" + strings.Repeat(",?", width-1) + ")"
	return one + strings.Repeat(","+one, n-1)
}

// checkText refuses text the stores escape before writing it (a NUL
// byte): the raw baselines write values as they are, which is only the
// same row for text that needs no escape, as the generated items are.
func checkText(r *crawlkeeper.Record) error {
	for _, s := range []string{r.Key, r.Source, r.Title, r.URL, r.SearchText} {
		if strings.IndexByte(s, 0) >= 0 || strings.Contains(s, "\uffff") {
			return fmt.Errorf("rawbench: record %d holds text the store escapes; the raw baselines take generated items only", r.ID)
		}
	}
	return nil
}

// batches calls f on runs of at most n elements of xs.
func batches[T any](xs []T, n int, f func([]T) error) error {
	for len(xs) > 0 {
		k := min(n, len(xs))
		if err := f(xs[:k]); err != nil {
			return err
		}
		xs = xs[k:]
	}
	return nil
}

// CountRows reads every column of every row, as an application would, and
// counts the rows: the search benchmark's raw baselines end with it.
func countRows(rows *sql.Rows, err error) (int, error) {
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
