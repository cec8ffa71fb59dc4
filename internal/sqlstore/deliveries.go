package sqlstore

import (
	"context"
	"database/sql"

	"github.com/crawlkeeper/crawlkeeper"
)

// RowsQuerier runs a query; *sql.DB and *sql.Tx are one.
type RowsQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Deliveries reads the per-source delivery counters with query, which
// returns rows of (source, deliveries, duplicates); decode undoes the
// store's encoding of source names.
func Deliveries(ctx context.Context, db RowsQuerier, query string, decode func(string) string) ([]crawlkeeper.DeliveryCount, error) {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []crawlkeeper.DeliveryCount
	for rows.Next() {
		var c crawlkeeper.DeliveryCount
		if err := rows.Scan(&c.Source, &c.Deliveries, &c.Duplicates); err != nil {
			return nil, err
		}
		c.Source = decode(c.Source)
		out = append(out, c)
	}
	return out, rows.Err()
}
