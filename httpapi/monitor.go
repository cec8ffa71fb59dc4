package httpapi

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
)

// MonitorRoutes registers the crawl-monitor routes for mon.
func MonitorRoutes(mon crawlkeeper.Monitor) func(s *Server) {
	return func(s *Server) {
		m := &monitorAPI{s: s, mon: mon}
		read, ingest := crawlkeeper.ScopeRead, crawlkeeper.ScopeIngest
		s.Route("GET /api/v1/rounds", read, m.list)
		s.Route("GET /api/v1/rounds/{round}", read, m.status)
		s.Route("GET /api/v1/rounds/{round}/remaining", read, m.remaining)
		s.Route("GET /api/v1/rounds/{round}/diff/{vs}", read, m.diff)
		s.Route("POST /api/v1/rounds/{round}/queue", ingest, m.queue)
		s.Route("POST /api/v1/rounds/{round}/done", ingest, m.mark(crawlkeeper.MarkDone))
		s.Route("POST /api/v1/rounds/{round}/fail", ingest, m.mark(crawlkeeper.MarkFailed))
		s.Route("GET /api/v1/targets/{target}", read, m.target)
		s.Route("GET /api/v1/fields", read, m.fields)
	}
}

type monitorAPI struct {
	s   *Server
	mon crawlkeeper.Monitor
}

func roundParam(r *http.Request, name string) (string, error) {
	round := r.PathValue(name)
	if err := crawlkeeper.ValidateRound(round); err != nil {
		return "", err
	}
	return round, nil
}

func (m *monitorAPI) list(w http.ResponseWriter, r *http.Request) error {
	rounds, err := m.mon.Rounds(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"rounds": rounds})
	return nil
}

func (m *monitorAPI) status(w http.ResponseWriter, r *http.Request) error {
	round, err := roundParam(r, "round")
	if err != nil {
		return err
	}
	st, err := m.mon.Status(r.Context(), round)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// pageParams reads after and limit (1..10000, default 100).
func pageParams(r *http.Request) (string, int, error) {
	q := r.URL.Query()
	limit := 100
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 10000 {
			return "", 0, crawlkeeper.Errorf(crawlkeeper.EINVALID, "limit=%q: use a number from 1 to 10000", l)
		}
		limit = n
	}
	return q.Get("after"), limit, nil
}

func (m *monitorAPI) remaining(w http.ResponseWriter, r *http.Request) error {
	round, err := roundParam(r, "round")
	if err != nil {
		return err
	}
	after, limit, err := pageParams(r)
	if err != nil {
		return err
	}
	names, err := m.mon.Remaining(r.Context(), round, after, limit+1)
	if err != nil {
		return err
	}
	next := ""
	if len(names) > limit {
		names = names[:limit]
		next = names[limit-1]
	}
	writeJSON(w, http.StatusOK, map[string]any{"round": round, "targets": names, "next": next})
	return nil
}

func (m *monitorAPI) diff(w http.ResponseWriter, r *http.Request) error {
	a, err := roundParam(r, "round")
	if err != nil {
		return err
	}
	b, err := roundParam(r, "vs")
	if err != nil {
		return err
	}
	after, limit, err := pageParams(r)
	if err != nil {
		return err
	}
	d, err := m.mon.Diff(r.Context(), a, b, after, limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// targetNames reads target names from a request body: a JSON array of
// strings, or one name per line.
func targetNames(r *http.Request) ([]string, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	trimmed := strings.TrimSpace(string(body))
	var names []string
	if strings.HasPrefix(trimmed, "[") {
		if err := json.Unmarshal([]byte(trimmed), &names); err != nil {
			return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "targets: %v; send a JSON array of strings or one name per line", err)
		}
	} else {
		sc := bufio.NewScanner(strings.NewReader(trimmed))
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if name := strings.TrimSpace(sc.Text()); name != "" {
				names = append(names, name)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "targets: %v", err)
		}
	}
	if len(names) == 0 {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "no target names in the body: send a JSON array of strings or one name per line")
	}
	return names, nil
}

func (m *monitorAPI) queue(w http.ResponseWriter, r *http.Request) error {
	round, err := roundParam(r, "round")
	if err != nil {
		return err
	}
	names, err := targetNames(r)
	if err != nil {
		return err
	}
	req := crawlkeeper.QueueRequest{Round: round, Targets: names, At: m.s.Now()}
	if b := r.URL.Query().Get("bucket"); b != "" {
		d, err := crawlkeeper.ParseDuration(b)
		if err != nil || d <= 0 {
			return crawlkeeper.Errorf(crawlkeeper.EINVALID, "bucket=%q: use a duration such as 10m or 30m", b)
		}
		req.Bucket = d.D()
	}
	res, err := m.mon.Queue(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (m *monitorAPI) mark(kind crawlkeeper.MarkKind) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		round, err := roundParam(r, "round")
		if err != nil {
			return err
		}
		names, err := targetNames(r)
		if err != nil {
			return err
		}
		now := m.s.Now()
		marks := make([]crawlkeeper.Mark, len(names))
		for i, n := range names {
			marks[i] = crawlkeeper.Mark{Round: round, Target: n, Kind: kind, At: now}
		}
		n, err := m.mon.Mark(r.Context(), marks)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]any{"round": round, "kind": kind, "marked": n})
		return nil
	}
}

func (m *monitorAPI) target(w http.ResponseWriter, r *http.Request) error {
	st, err := m.mon.Target(r.Context(), r.PathValue("target"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

func (m *monitorAPI) fields(w http.ResponseWriter, r *http.Request) error {
	fs, err := m.mon.Fields(r.Context(), r.URL.Query().Get("source"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"fields": fs})
	return nil
}
