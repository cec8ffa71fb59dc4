package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

func (s *Server) routes() {
	read, ingest, admin := crawlkeeper.ScopeRead, crawlkeeper.ScopeIngest, crawlkeeper.ScopeAdmin
	s.Route("POST /api/v1/items", ingest, s.postItems)
	s.Route("GET /api/v1/records", read, s.getRecords)
	s.Route("GET /api/v1/records/{id}", read, s.getRecord)
	s.Route("GET /api/v1/records/{id}/history", read, s.getHistory)
	s.Route("POST /api/v1/records/{id}/restore", admin, s.postRestore)
	s.Route("POST /api/v1/archive", admin, s.postArchive)
	s.Route("GET /api/v1/archive/runs", read, s.getArchiveRuns)
	s.Route("GET /api/v1/stats", read, s.getStats)
	s.Route("GET /api/v1/search", read, s.getSearch)
}

// postItems ingests NDJSON or a JSON array. The response is the ingest
// summary: 200 when every item was stored, 400 when some were rejected
// (the valid ones are stored all the same), 413 when the body was cut at
// the size limit (the items before the cut are stored).
func (s *Server) postItems(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	meta := crawlkeeper.Meta{Source: q.Get("source"), Target: q.Get("target"), Round: q.Get("round")}
	// The request's metadata is held to the limits of an item's own; a
	// request that breaks them is refused whole (400), nothing stored.
	if err := meta.Validate([3]string{"query parameter source", "query parameter target", "query parameter round"}); err != nil {
		return err
	}
	sum, err := s.Ingester.Ingest(r.Context(), r.Body, meta)
	if sum != nil {
		s.Metrics.ObserveIngest(sum)
	}
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			writeJSON(w, http.StatusRequestEntityTooLarge, partialIngest{sum, fmt.Sprintf("request body over the limit of %d bytes: the items before the cut were stored; send the rest in smaller batches", mb.Limit)})
			return nil
		}
		if crawlkeeper.ErrorCode(err) == crawlkeeper.EINVALID && sum != nil {
			// The input broke mid-way (a truncated array, say): report the
			// items stored so far with the reason.
			writeJSON(w, http.StatusBadRequest, partialIngest{sum, err.Error()})
			return nil
		}
		return err
	}
	status := http.StatusOK
	if sum.Rejected > 0 {
		status = http.StatusBadRequest
	}
	writeJSON(w, status, sum)
	return nil
}

// IngestItems ingests decoded items, each with its meta, and counts them
// in the server's metrics as POST /api/v1/items does: an ingest path
// inside the process (the demo's simulated crawl) shows on /metrics and
// the dashboard like one through the API.
func (s *Server) IngestItems(ctx context.Context, items []map[string]any, metas []crawlkeeper.Meta) (*crawlkeeper.IngestSummary, error) {
	sum, err := s.Ingester.IngestItems(ctx, items, metas)
	if sum != nil && s.Metrics != nil {
		s.Metrics.ObserveIngest(sum)
	}
	return sum, err
}

// partialIngest is the body of an ingest that stopped early: the summary
// of what was stored and why it stopped.
type partialIngest struct {
	*crawlkeeper.IngestSummary
	Stopped string `json:"stopped"`
}

// RecordsPage is the body of GET /records.
type RecordsPage struct {
	Records []*crawlkeeper.Record `json:"records"`
	Next    string                `json:"next,omitempty"`
}

func (s *Server) getRecords(w http.ResponseWriter, r *http.Request) error {
	q, err := ParseRecordQuery(r.URL.Query())
	if err != nil {
		return err
	}
	page, err := s.Store.List(r.Context(), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, RecordsPage{Records: page.Records, Next: page.Next})
	return nil
}

// ParseRecordQuery reads the filters of GET /records: source, q, round and
// target (exact, on the round and target of each record's last delivery
// that carried them), archived, since (RFC 3339), limit (1..1000), cursor;
// newest last_updated_at first. Every value is treated as data, never as
// query syntax.
func ParseRecordQuery(v map[string][]string) (crawlkeeper.RecordQuery, error) {
	get := func(k string) string {
		if xs := v[k]; len(xs) > 0 {
			return xs[0]
		}
		return ""
	}
	q := crawlkeeper.RecordQuery{Order: crawlkeeper.OrderNewest, Source: get("source"), Q: get("q"), Round: get("round"), Target: get("target"), Cursor: get("cursor"), Limit: 50}
	for k, xs := range v {
		switch k {
		case "source", "q", "round", "target", "cursor", "archived", "since", "limit":
		default:
			return q, crawlkeeper.Errorf(crawlkeeper.EINVALID, "unknown filter %q: use source, q, round, target, archived, since, limit or cursor", k)
		}
		if len(xs) > 1 {
			return q, crawlkeeper.Errorf(crawlkeeper.EINVALID, "filter %q given %d times; give it once", k, len(xs))
		}
		if max := paramLimit(k); len(xs[0]) > max {
			return q, crawlkeeper.Errorf(crawlkeeper.EINVALID, "filter %q is %d bytes; the limit is %d", k, len(xs[0]), max)
		}
	}
	if a := get("archived"); a != "" {
		b, err := strconv.ParseBool(a)
		if err != nil {
			return q, crawlkeeper.Errorf(crawlkeeper.EINVALID, "archived=%q: use true or false", a)
		}
		q.Archived = b
	}
	if since := get("since"); since != "" {
		t, err := time.Parse(time.RFC3339Nano, since)
		if err != nil {
			return q, crawlkeeper.Errorf(crawlkeeper.EINVALID, "since=%q: use an RFC 3339 time such as 2025-09-15T00:00:00Z", since)
		}
		q.Since = t
	}
	if l := get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 1000 {
			return q, crawlkeeper.Errorf(crawlkeeper.EINVALID, "limit=%q: use a number from 1 to 1000", l)
		}
		q.Limit = n
	}
	if _, err := crawlkeeper.DecodeCursor(q.Cursor, q.Order); err != nil {
		return q, err
	}
	return q, q.Validate()
}

// paramLimit is the longest value a filter of a listing or a search takes:
// a source or target as long as ingest stores (crawlkeeper.MaxNameBytes),
// 1000 bytes for the others.
func paramLimit(name string) int {
	if name == "source" || name == "target" {
		return crawlkeeper.MaxNameBytes
	}
	return 1000
}

func pathID(r *http.Request) (int64, error) {
	raw := r.PathValue("id")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return 0, crawlkeeper.Errorf(crawlkeeper.EINVALID, "record id %q is not a positive number", raw)
	}
	return id, nil
}

func (s *Server) getRecord(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	rec, err := s.Store.Get(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rec)
	return nil
}

// HistoryBody is the body of GET /records/{id}/history: the kept versions,
// oldest first, and the current one.
type HistoryBody struct {
	Record   *crawlkeeper.Record        `json:"record"`
	Versions []crawlkeeper.HistoryEntry `json:"versions"`
}

func (s *Server) getHistory(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	rec, err := s.Store.Get(r.Context(), id)
	if err != nil {
		return err
	}
	hist, err := s.Store.History(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, HistoryBody{Record: rec, Versions: hist})
	return nil
}

func (s *Server) postRestore(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	rep, err := s.Archiver.Restore(r.Context(), []int64{id})
	if err != nil {
		return err
	}
	if len(rep.Restored) == 0 {
		if _, err := s.Store.Get(r.Context(), id); err != nil {
			return err
		}
		return crawlkeeper.Errorf(crawlkeeper.ECONFLICT, "record %d is not archived", id)
	}
	writeJSON(w, http.StatusOK, rep)
	return nil
}

// archiveRequest is the optional JSON body of POST /archive; the same
// options may be given as query parameters.
type archiveRequest struct {
	DryRun bool   `json:"dry_run"`
	Force  bool   `json:"force"`
	Source string `json:"source"`
}

func (s *Server) postArchive(w http.ResponseWriter, r *http.Request) error {
	var req archiveRequest
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return crawlkeeper.Errorf(crawlkeeper.EINVALID, "archive request: %v; send {\"dry_run\":bool,\"force\":bool,\"source\":\"...\"}", err)
		}
	}
	q := r.URL.Query()
	for name, dst := range map[string]*bool{"dry_run": &req.DryRun, "force": &req.Force} {
		if v := q.Get(name); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return crawlkeeper.Errorf(crawlkeeper.EINVALID, "%s=%q: use true or false", name, v)
			}
			*dst = b
		}
	}
	if v := q.Get("source"); v != "" {
		req.Source = v
	}
	run := s.Archiver.Run
	if s.RunArchive != nil {
		run = s.RunArchive
	}
	rep, err := run(r.Context(), crawlkeeper.ArchiveOptions{DryRun: req.DryRun, Force: req.Force, Source: req.Source})
	if err != nil {
		return err
	}
	s.Metrics.ObserveArchive(rep, s.Now())
	writeJSON(w, http.StatusOK, rep)
	return nil
}

func (s *Server) getArchiveRuns(w http.ResponseWriter, r *http.Request) error {
	limit := 50
	if l := r.URL.Query().Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 1000 {
			return crawlkeeper.Errorf(crawlkeeper.EINVALID, "limit=%q: use a number from 1 to 1000", l)
		}
		limit = n
	}
	runs, err := s.Store.Journal(r.Context(), crawlkeeper.JournalArchiveRun, limit)
	if err != nil {
		return err
	}
	out := make([]json.RawMessage, 0, len(runs))
	for _, e := range runs {
		out = append(out, e.Body)
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": out})
	return nil
}

func (s *Server) getStats(w http.ResponseWriter, r *http.Request) error {
	st, err := s.Store.Stats(r.Context())
	if err != nil {
		return err
	}
	extra, err := s.Store.ArchiveStats(r.Context(), s.Now())
	if err != nil {
		return err
	}
	st.Merge(extra)
	if err := crawlkeeper.SampleDateErrors(r.Context(), s.Store, s.Config, st, 3); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}
