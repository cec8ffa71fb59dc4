package mysql

import (
	"context"
	"database/sql"
	"fmt"
)

// deleteIDs deletes the rows of ids from table.
func deleteIDs(ctx context.Context, tx *sql.Tx, table string, ids []int64) error {
	for len(ids) > 0 {
		n := min(len(ids), maxRows)
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE id IN (`+list(n)+`)`, int64s(ids[:n])...); err != nil {
			return fmt.Errorf("delete from %s: %w", table, err)
		}
		ids = ids[n:]
	}
	return nil
}
