//go:build sqlite || mysql

package main

import "database/sql"

// scanHits reads whole rows, every column, as the raw baselines do.
func scanHits(rows *sql.Rows, err error) ([]hit, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var hits []hit
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		hits = append(hits, pick(cols, vals))
	}
	return hits, rows.Err()
}
