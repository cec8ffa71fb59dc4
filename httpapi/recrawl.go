package httpapi

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// RecrawlRoutes registers the recrawl advisor's routes: GET /api/v1/next,
// what a crawler should fetch now, and GET /api/v1/recrawl, each source's
// freshness now and at other budgets (the dashboard's figures).
func RecrawlRoutes(adv *crawlkeeper.Advisor) func(s *Server) {
	return func(s *Server) {
		a := &recrawlAPI{s: s, adv: adv}
		s.Route("GET /api/v1/next", crawlkeeper.ScopeRead, a.next)
		s.Route("GET /api/v1/recrawl", crawlkeeper.ScopeRead, a.freshness)
	}
}

type recrawlAPI struct {
	s   *Server
	adv *crawlkeeper.Advisor

	// The per-source figures read every active record: a dashboard that
	// polls them gets the figures of the last minute.
	mu     sync.Mutex
	cached []crawlkeeper.SourceFreshness
	at     time.Time
}

// freshnessTTL is how long GET /api/v1/recrawl reuses its figures.
const freshnessTTL = time.Minute

// ParseNextQuery reads GET /api/v1/next's parameters: source (required,
// and may be empty: the empty source name), budget (fetches per period,
// like 1000/day; default the source's deliveries over the last 24
// hours), limit (1..100000, default 100), round and fill.
func ParseNextQuery(v map[string][]string) (crawlkeeper.NextQuery, error) {
	get := func(k string) string {
		if xs := v[k]; len(xs) > 0 {
			return xs[0]
		}
		return ""
	}
	var q crawlkeeper.NextQuery
	if _, ok := v["source"]; !ok {
		return q, crawlkeeper.Errorf(crawlkeeper.EINVALID, "source is required: the advisor ranks one source's records (source= is the empty source name)")
	}
	q.Source, q.Round = get("source"), get("round")
	if b := get("budget"); b != "" {
		n, err := crawlkeeper.ParseBudget(b)
		if err != nil {
			return q, err
		}
		q.Budget = n
	}
	q.Limit = crawlkeeper.DefaultNextLimit
	if l := get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > crawlkeeper.MaxNextLimit {
			return q, crawlkeeper.Errorf(crawlkeeper.EINVALID, "limit=%q: use a number from 1 to %d", l, crawlkeeper.MaxNextLimit)
		}
		q.Limit = n
	}
	if f := get("fill"); f != "" {
		b, err := strconv.ParseBool(f)
		if err != nil {
			return q, crawlkeeper.Errorf(crawlkeeper.EINVALID, "fill=%q: use true or false", f)
		}
		q.Fill = b
	}
	if q.Round != "" {
		if err := crawlkeeper.ValidateRound(q.Round); err != nil {
			return q, err
		}
	}
	return q, nil
}

func (a *recrawlAPI) next(w http.ResponseWriter, r *http.Request) error {
	q, err := ParseNextQuery(r.URL.Query())
	if err != nil {
		return err
	}
	plan, err := a.adv.Next(r.Context(), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, plan)
	return nil
}

// RecrawlFreshness is the body of GET /api/v1/recrawl.
type RecrawlFreshness struct {
	Sources []crawlkeeper.SourceFreshness `json:"sources"`
	At      time.Time                     `json:"at"`
}

func (a *recrawlAPI) freshness(w http.ResponseWriter, r *http.Request) error {
	now := a.s.Now()
	if src, ok := r.URL.Query()["source"]; ok {
		f, err := a.adv.Freshness(r.Context(), src[0], 0)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, RecrawlFreshness{Sources: []crawlkeeper.SourceFreshness{*f}, At: now})
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cached == nil || now.Sub(a.at) >= freshnessTTL || now.Before(a.at) {
		st, err := a.s.Store.Stats(r.Context())
		if err != nil {
			return err
		}
		var sources []string
		for name, ss := range st.Sources {
			if ss.Active > 0 {
				sources = append(sources, name)
			}
		}
		out, err := a.adv.FreshnessAll(r.Context(), sources)
		if err != nil {
			return err
		}
		a.cached, a.at = out, now
	}
	writeJSON(w, http.StatusOK, RecrawlFreshness{Sources: a.cached, At: a.at})
	return nil
}
