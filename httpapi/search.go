package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// getSearch answers GET /api/v1/search?q=…: one page of full-text search
// hits with snippets (see ParseSearchQuery for the parameters).
func (s *Server) getSearch(w http.ResponseWriter, r *http.Request) error {
	q, err := ParseSearchQuery(r.URL.Query())
	if err != nil {
		return err
	}
	page, err := crawlkeeper.Search(r.Context(), s.Store, s.Config, q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// ParseSearchQuery reads the parameters of GET /search: q (the query, in
// the search language of crawlkeeper.ParseSearch), source, round and
// target (exact, on the round and target of each record's last delivery
// that carried them), archived, since and until (RFC 3339, on last_updated_at), event_from and event_to
// (RFC 3339, on event_at), order (relevance or newest), limit (1..1000,
// default 20) and cursor. Every value is treated as data.
func ParseSearchQuery(v map[string][]string) (crawlkeeper.SearchQuery, error) {
	get := func(k string) string {
		if xs := v[k]; len(xs) > 0 {
			return xs[0]
		}
		return ""
	}
	q := crawlkeeper.SearchQuery{Text: get("q"), Source: get("source"), Round: get("round"), Target: get("target"), Cursor: get("cursor")}
	for k, xs := range v {
		switch k {
		case "q", "source", "round", "target", "cursor", "archived", "since", "until", "event_from", "event_to", "order", "limit":
		default:
			return q, crawlkeeper.Errorf(crawlkeeper.EINVALID, "unknown search parameter %q: use q, source, round, target, archived, since, until, event_from, event_to, order, limit or cursor", k)
		}
		if len(xs) > 1 {
			return q, crawlkeeper.Errorf(crawlkeeper.EINVALID, "search parameter %q given %d times; give it once", k, len(xs))
		}
		if max := paramLimit(k); len(xs[0]) > max {
			return q, crawlkeeper.Errorf(crawlkeeper.EINVALID, "search parameter %q is %d bytes; the limit is %d", k, len(xs[0]), max)
		}
	}
	if q.Text == "" {
		return q, crawlkeeper.Errorf(crawlkeeper.EINVALID, "search needs q, the query: words, \"phrases\", prefix* and -excluded words")
	}
	if a := get("archived"); a != "" {
		b, err := strconv.ParseBool(a)
		if err != nil {
			return q, crawlkeeper.Errorf(crawlkeeper.EINVALID, "archived=%q: use true or false", a)
		}
		q.Archived = b
	}
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"since", &q.Since}, {"until", &q.Until}, {"event_from", &q.EventFrom}, {"event_to", &q.EventTo}} {
		if t := get(f.name); t != "" {
			v, err := time.Parse(time.RFC3339Nano, t)
			if err != nil {
				return q, crawlkeeper.Errorf(crawlkeeper.EINVALID, "%s=%q: use an RFC 3339 time such as 2025-09-15T00:00:00Z", f.name, t)
			}
			*f.dst = v
		}
	}
	switch o := get("order"); o {
	case "", "relevance":
	case "newest":
		q.Order = crawlkeeper.SearchNewest
	default:
		return q, crawlkeeper.Errorf(crawlkeeper.EINVALID, "order=%q: use relevance or newest", o)
	}
	if l := get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > crawlkeeper.MaxSearchLimit {
			return q, crawlkeeper.Errorf(crawlkeeper.EINVALID, "limit=%q: use a number from 1 to %d", l, crawlkeeper.MaxSearchLimit)
		}
		q.Limit = n
	}
	_, err := q.Plan()
	return q, err
}
