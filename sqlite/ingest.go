package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// writer holds the prepared statements of one write transaction.
type writer struct {
	ctx   context.Context
	s     *Store
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
}

func (s *Store) newWriter(ctx context.Context, tx *sql.Tx) *writer {
	return &writer{ctx: ctx, s: s, tx: tx, stmts: map[string]*sql.Stmt{}}
}

func (w *writer) close() {
	for k, st := range w.stmts {
		st.Close()
		delete(w.stmts, k)
	}
}

// exec runs q with a statement prepared once on the writer connection
// and borrowed by this transaction.
func (w *writer) exec(q string, args ...any) (sql.Result, error) {
	st, ok := w.stmts[q]
	if !ok {
		var err error
		st, err = w.s.writeStmt(w.ctx, w.tx, q)
		if err != nil {
			return nil, fmt.Errorf("prepare: %w", err)
		}
		w.stmts[q] = st
	}
	res, err := st.ExecContext(w.ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("write: %w", err)
	}
	return res, nil
}
