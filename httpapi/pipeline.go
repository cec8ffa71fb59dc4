package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
)

// Pipeline is what the reprocessing routes need from the pipeline.
type Pipeline interface {
	// Status returns where reprocessing stands (pipeline.Status).
	Status(ctx context.Context) (any, error)
	// Retry processes the dead-lettered records ids again (all when ids
	// is nil) and reports what happened.
	Retry(ctx context.Context, ids []int64) (any, error)
}

// PipelineRoutes registers the reprocessing routes.
func PipelineRoutes(p Pipeline) func(s *Server) {
	return func(s *Server) {
		s.Route("GET /api/v1/scan", crawlkeeper.ScopeRead, func(w http.ResponseWriter, r *http.Request) error {
			st, err := p.Status(r.Context())
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, st)
			return nil
		})
		s.Route("GET /api/v1/deadletters", crawlkeeper.ScopeRead, func(w http.ResponseWriter, r *http.Request) error {
			limit := 1000
			if l := r.URL.Query().Get("limit"); l != "" {
				n, err := strconv.Atoi(l)
				if err != nil || n < 1 || n > 100000 {
					return crawlkeeper.Errorf(crawlkeeper.EINVALID, "limit=%q: use a number from 1 to 100000", l)
				}
				limit = n
			}
			dls, err := s.Store.DeadLetters(r.Context(), limit)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, map[string]any{"dead_letters": dls})
			return nil
		})
		s.Route("POST /api/v1/deadletters/retry", crawlkeeper.ScopeAdmin, func(w http.ResponseWriter, r *http.Request) error {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return err
			}
			var req struct {
				IDs []int64 `json:"ids"`
			}
			if len(strings.TrimSpace(string(body))) > 0 {
				dec := json.NewDecoder(strings.NewReader(string(body)))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&req); err != nil {
					return crawlkeeper.Errorf(crawlkeeper.EINVALID, "retry request: %v; send {\"ids\":[1,2]} or nothing to retry all", err)
				}
			}
			res, err := p.Retry(r.Context(), req.IDs)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, res)
			return nil
		})
	}
}
