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
		s.Route("GET /api/v1/rounds/{round}/failed", read, m.failed)
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

// failed answers a page of a round's failed targets with their reasons:
// also=S keeps those that failed in round S too, done_later=1 those a
// later round did.
func (m *monitorAPI) failed(w http.ResponseWriter, r *http.Request) error {
	round, err := roundParam(r, "round")
	if err != nil {
		return err
	}
	after, limit, err := pageParams(r)
	if err != nil {
		return err
	}
	q := crawlkeeper.FailedQuery{Round: round, Also: r.URL.Query().Get("also"), After: after, Limit: limit}
	switch v := r.URL.Query().Get("done_later"); v {
	case "", "0", "false":
	case "1", "true":
		q.DoneLater = true
	default:
		return crawlkeeper.Errorf(crawlkeeper.EINVALID, "done_later=%q: use 1 or 0", v)
	}
	page, err := m.mon.Failed(r.Context(), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
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
	marks, err := targetMarks(r, false)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(marks))
	for i, mk := range marks {
		names[i] = mk.Target
	}
	return names, nil
}

// targetMarks reads target names, and with reasons set their failure
// reasons, from a request body: a JSON array of strings, a JSON array of
// {"target": NAME, "reason": TEXT} objects (reasons only), or one name per
// line. Names without a reason of their own get the reason query
// parameter.
func targetMarks(r *http.Request, reasons bool) ([]crawlkeeper.Mark, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	trimmed := strings.TrimSpace(string(body))
	var marks []crawlkeeper.Mark
	if strings.HasPrefix(trimmed, "[") {
		var raw []json.RawMessage
		if err := json.Unmarshal([]byte(trimmed), &raw); err != nil {
			return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "targets: %v; send a JSON array of strings or one name per line", err)
		}
		for i, el := range raw {
			var name string
			if err := json.Unmarshal(el, &name); err == nil {
				marks = append(marks, crawlkeeper.Mark{Target: name})
				continue
			}
			var obj struct {
				Target string `json:"target"`
				Reason string `json:"reason"`
			}
			dec := json.NewDecoder(strings.NewReader(string(el)))
			dec.DisallowUnknownFields()
			if !reasons || dec.Decode(&obj) != nil || obj.Target == "" {
				if reasons {
					return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "targets[%d]: send a name, or an object {\"target\": NAME, \"reason\": TEXT}", i)
				}
				return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "targets[%d]: not a string; send a JSON array of strings or one name per line", i)
			}
			marks = append(marks, crawlkeeper.Mark{Target: obj.Target, Reason: crawlkeeper.CleanReason(obj.Reason)})
		}
	} else {
		sc := bufio.NewScanner(strings.NewReader(trimmed))
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if name := strings.TrimSpace(sc.Text()); name != "" {
				marks = append(marks, crawlkeeper.Mark{Target: name})
			}
		}
		if err := sc.Err(); err != nil {
			return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "targets: %v", err)
		}
	}
	if len(marks) == 0 {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "no target names in the body: send a JSON array of strings or one name per line")
	}
	if reason := crawlkeeper.CleanReason(r.URL.Query().Get("reason")); reason != "" {
		if !reasons {
			return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "reason= goes with failed marks only (POST .../fail)")
		}
		for i := range marks {
			if marks[i].Reason == "" {
				marks[i].Reason = reason
			}
		}
	}
	return marks, nil
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
		marks, err := targetMarks(r, kind == crawlkeeper.MarkFailed)
		if err != nil {
			return err
		}
		now := m.s.Now()
		for i := range marks {
			marks[i].Round, marks[i].Kind, marks[i].At = round, kind, now
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
