package sqlite

import (
	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
)

// RecentLifetimesQuery lets the tests check the query's plan.
const RecentLifetimesQuery = sqlstore.RecentLifetimesQuery

// SearchSQL lets the tests check the plan of a search query.
func SearchSQL(q crawlkeeper.SearchQuery) (string, []any, error) {
	p, err := q.Plan()
	if err != nil {
		return "", nil, err
	}
	query, args := searchSQL(p)
	return query, args, nil
}
