package sqlite

import (
	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
)

// RecentLifetimesQuery lets the tests check the query's plan.
const RecentLifetimesQuery = sqlstore.RecentLifetimesQuery

// SearchSQL lets the tests check the plan of a search query on s.
func SearchSQL(s *Store, q crawlkeeper.SearchQuery) (string, []any, error) {
	p, err := q.Plan()
	if err != nil {
		return "", nil, err
	}
	query, args := s.Store.SearchSQL(p)
	return query, args, nil
}

// RecrawlPack lets the tests check that the advisor's read uses its index.
const RecrawlPack = recrawlPack

// ReaderCache lets the tests check a reader's page cache.
const ReaderCache = readerCache
