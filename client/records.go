package client

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// Records lists one page of records on the server (GET /api/v1/records),
// newest last_updated_at first whatever q.Order says (the API's only
// order), filtered by q's Source, Q, Round, Target, Since and Archived;
// pass the page's Next as q.Cursor for the following one. Limit is 1 to
// 1000 (the server's default is 50). Options.Token needs the read scope.
// Like Search, it is not batched or retried, and answers with an *Error
// (EINVALID for a bad filter or cursor).
func (c *Client) Records(ctx context.Context, q crawlkeeper.RecordQuery) (*crawlkeeper.RecordPage, error) {
	v := url.Values{}
	for name, s := range map[string]string{"source": q.Source, "q": q.Q, "round": q.Round, "target": q.Target, "cursor": q.Cursor} {
		if s != "" {
			v.Set(name, s)
		}
	}
	if q.Archived {
		v.Set("archived", "true")
	}
	if !q.Since.IsZero() {
		v.Set("since", q.Since.UTC().Format(time.RFC3339Nano))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var answer struct {
		Records []*crawlkeeper.Record `json:"records"`
		Next    string                `json:"next"`
	}
	if err := c.getJSON(ctx, "/api/v1/records", "records", v, &answer); err != nil {
		return nil, err
	}
	return &crawlkeeper.RecordPage{Records: answer.Records, Next: answer.Next}, nil
}
