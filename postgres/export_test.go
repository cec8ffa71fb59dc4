package postgres

import "github.com/crawlkeeper/crawlkeeper"

// SearchSQL lets the tests check the plan of a search query on s.
func SearchSQL(s *Store, q crawlkeeper.SearchQuery) (string, []any, error) {
	p, err := q.Plan()
	if err != nil {
		return "", nil, err
	}
	query, args := s.Store.SearchSQL(p)
	return rebind(query), encArgs(args), nil
}
