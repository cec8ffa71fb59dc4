package postgres

import "github.com/crawlkeeper/crawlkeeper"

// SearchSQL lets the tests check the plan of a search query.
func SearchSQL(q crawlkeeper.SearchQuery) (string, []any, error) {
	p, err := q.Plan()
	if err != nil {
		return "", nil, err
	}
	query, args := searchSQL(p)
	return query, args, nil
}
