package sqlstore

import (
	"context"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
)

// Searcher is an engine's full-text search.
type Searcher interface {
	// SearchSQL renders a search plan as one query over the records
	// table of p (table), whose rows are the record columns cols
	// (qualified with the alias t) followed by the score. where and args
	// are the plan's filters on record columns, unqualified, with the
	// newest order's cursor among them; the relevance cursor, the match
	// and the ranking are the engine's. The query returns at most
	// p.Limit+1 rows.
	SearchSQL(p *crawlkeeper.SearchPlan, table, cols string, where []string, args []any) (string, []any)
	// CheckSearch verifies the engine's full-text index against the
	// records and hands each violation to add.
	CheckSearch(ctx context.Context, add func(crawlkeeper.Violation)) error
}

var _ crawlkeeper.SearchStore = (*Store)(nil)

// Search implements crawlkeeper.SearchStore.
func (s *Store) Search(ctx context.Context, q crawlkeeper.SearchQuery) (*crawlkeeper.SearchPage, error) {
	p, err := q.Plan()
	if err != nil {
		return nil, err
	}
	query, args := s.SearchSQL(p)
	var hits []crawlkeeper.SearchHit
	var v recordRow
	err = EachRow(ctx, s.e.Reader(), func(rows Rows) error {
		var score float64
		r, err := s.scanRecord(rows, p.Archived, &v, &score)
		hits = append(hits, crawlkeeper.SearchHit{Record: r, Score: score})
		return err
	}, query, args...)
	if err != nil {
		return nil, s.e.Wrap("search", err)
	}
	return p.FinishPage(hits), nil
}

// SearchSQL returns the query of a search plan and its arguments.
func (s *Store) SearchSQL(p *crawlkeeper.SearchPlan) (string, []any) {
	var f conds
	if p.Source != "" {
		f.add("source = ?", p.Source)
	}
	if p.Round != "" {
		f.add("last_round = ?", p.Round)
	}
	if p.Target != "" {
		f.add("last_target = ?", p.Target)
	}
	if !p.Since.IsZero() {
		f.add("last_updated_at >= ?", p.Since.UnixMicro())
	}
	if !p.Until.IsZero() {
		f.add("last_updated_at < ?", p.Until.UnixMicro())
	}
	if !p.EventFrom.IsZero() {
		f.add("event_at >= ?", p.EventFrom.UnixMicro())
	}
	if !p.EventTo.IsZero() {
		f.add("event_at < ?", p.EventTo.UnixMicro())
	}
	if c := p.After; c != nil && p.Order == crawlkeeper.SearchNewest {
		f.add("(last_updated_at < ? OR (last_updated_at = ? AND id < ?))", c.UpdatedMicros, c.UpdatedMicros, c.ID)
	}
	return s.e.SearchSQL(p, table(p.Archived), "t."+strings.Join(Split(s.cols(p.Archived)), ", t."), f.where, f.args)
}

// SetSearchText implements crawlkeeper.SearchStore: one Bulk update per
// table, conditioned on each record's version.
func (s *Store) SetSearchText(ctx context.Context, updates []crawlkeeper.SearchTextUpdate) (int, error) {
	var n int64
	err := s.e.Write(ctx, "set search text", func(tx Querier) error {
		n = 0
		for _, archived := range []bool{false, true} {
			var rows [][]any
			for _, u := range updates {
				if u.Archived == archived {
					r := &crawlkeeper.Record{SearchText: u.Text, SearchLanguage: u.Language}
					rows = append(rows, append([]any{u.ID, u.Version}, s.e.SearchArgs(r)...))
				}
			}
			if len(rows) == 0 {
				continue
			}
			k, err := s.e.Update(ctx, tx, table(archived), []string{"id", "version"}, Split(s.e.SearchCols()), rows)
			n += k
			if err != nil {
				return err
			}
		}
		return nil
	})
	return int(n), err
}

// SearchTextMissing lists the records of a table written before search
// existed (search_text NULL), for CheckSearch.
func (s *Store) SearchTextMissing(ctx context.Context, table string, add func(crawlkeeper.Violation)) error {
	return EachRow(ctx, s.e.Reader(), func(rows Rows) error {
		var id int64
		var key string
		err := rows.Scan(&id, &key)
		add(crawlkeeper.SearchMissing(table, id, key))
		return err
	}, "SELECT id, `key` FROM "+table+" WHERE search_text IS NULL LIMIT 1000")
}
