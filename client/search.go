package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// Search runs a full-text search on the server (GET /api/v1/search) and
// returns one page of hits with snippets; pass the page's Next as
// q.Cursor for the following one. Options.Token needs the read scope.
// Search is not batched or retried: it answers at once, or with an
// *Error (EINVALID for a bad query or cursor).
func (c *Client) Search(ctx context.Context, q crawlkeeper.SearchQuery) (*crawlkeeper.SearchPage, error) {
	base, _, _ := strings.Cut(c.endpoint, "/api/v1/items")
	v := url.Values{}
	v.Set("q", q.Text)
	if q.Source != "" {
		v.Set("source", q.Source)
	}
	if q.Round != "" {
		v.Set("round", q.Round)
	}
	if q.Target != "" {
		v.Set("target", q.Target)
	}
	if q.Archived {
		v.Set("archived", "true")
	}
	for name, t := range map[string]time.Time{"since": q.Since, "until": q.Until, "event_from": q.EventFrom, "event_to": q.EventTo} {
		if !t.IsZero() {
			v.Set(name, t.UTC().Format(time.RFC3339Nano))
		}
	}
	if q.Order == crawlkeeper.SearchNewest {
		v.Set("order", "newest")
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/search?"+v.Encode(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if c.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.Token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("crawlkeeper client: search: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("crawlkeeper client: read answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		e := &Error{StatusCode: resp.StatusCode, Code: codeOfStatus(resp.StatusCode), Message: strings.TrimSpace(truncate(b))}
		var answer struct {
			Error *struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(b, &answer) == nil && answer.Error != nil {
			e.Code, e.Message = answer.Error.Code, answer.Error.Message
		}
		return nil, e
	}
	var page crawlkeeper.SearchPage
	if err := json.Unmarshal(b, &page); err != nil {
		return nil, &Error{StatusCode: resp.StatusCode, Code: crawlkeeper.EINTERNAL, Message: fmt.Sprintf("unexpected answer %q", truncate(b))}
	}
	return &page, nil
}
