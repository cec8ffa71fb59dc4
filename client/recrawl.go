package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/crawlkeeper/crawlkeeper"
)

// Next asks the recrawl advisor what to fetch now (GET /api/v1/next): the
// source's pages ranked by the freshness a fetch buys, the round's targets
// never fetched first when q.Round is set. q.Budget is fetches per day (0:
// the source's pace over the last 24 hours); q.Limit 0 is the server's
// 100. Options.Token needs the read scope.
func (c *Client) Next(ctx context.Context, q crawlkeeper.NextQuery) (*crawlkeeper.NextPlan, error) {
	v := url.Values{}
	v.Set("source", q.Source)
	if q.Budget != 0 {
		v.Set("budget", strconv.FormatFloat(q.Budget, 'g', -1, 64)+"/day")
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Round != "" {
		v.Set("round", q.Round)
	}
	if q.Fill {
		v.Set("fill", "true")
	}
	var plan crawlkeeper.NextPlan
	if err := c.getJSON(ctx, "/api/v1/next", "next", v, &plan); err != nil {
		return nil, err
	}
	return &plan, nil
}

// RecrawlFreshness reports each source's estimated freshness now and the
// freshness the optimal schedule keeps at budgets around its own (GET
// /api/v1/recrawl). Options.Token needs the read scope.
func (c *Client) RecrawlFreshness(ctx context.Context) ([]crawlkeeper.SourceFreshness, error) {
	var answer struct {
		Sources []crawlkeeper.SourceFreshness `json:"sources"`
	}
	if err := c.getJSON(ctx, "/api/v1/recrawl", "recrawl", nil, &answer); err != nil {
		return nil, err
	}
	return answer.Sources, nil
}
