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
	var page crawlkeeper.SearchPage
	if err := c.getJSON(ctx, "/api/v1/search", "search", v, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// getJSON sends GET path?v to the server (what names the call in
// errors) and decodes the 200 answer into out; any other status is an
// *Error with the server's code and message.
func (c *Client) getJSON(ctx context.Context, path, what string, v url.Values, out any) error {
	base, _, _ := strings.Cut(c.endpoint, "/api/v1/items")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path+"?"+v.Encode(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if c.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.Token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("crawlkeeper client: %s: %w", what, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("crawlkeeper client: read answer: %w", err)
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
		return e
	}
	if err := json.Unmarshal(b, out); err != nil {
		return &Error{StatusCode: resp.StatusCode, Code: crawlkeeper.EINTERNAL, Message: fmt.Sprintf("unexpected answer %q", truncate(b))}
	}
	return nil
}
