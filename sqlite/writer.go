package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
)

// writer is a write transaction's Querier; it holds the statements the
// transaction borrowed from the writer connection's cache.
type writer struct {
	// Querier runs the transaction's reads.
	sqlstore.Querier
	ctx   context.Context
	s     *Store
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
}

func (w *writer) close() {
	for k, st := range w.stmts {
		st.Close()
		delete(w.stmts, k)
	}
}

// Exec runs query with a statement prepared once on the writer connection
// and borrowed by this transaction.
func (w *writer) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	st, ok := w.stmts[query]
	if !ok {
		var err error
		st, err = w.s.writeStmt(w.ctx, w.tx, query)
		if err != nil {
			return 0, fmt.Errorf("prepare: %w", err)
		}
		w.stmts[query] = st
	}
	res, err := st.ExecContext(w.ctx, args...)
	if err != nil {
		return 0, fmt.Errorf("write: %w", err)
	}
	return res.RowsAffected()
}
