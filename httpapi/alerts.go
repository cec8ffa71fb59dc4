package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/crawlkeeper/crawlkeeper"
)

// Alerts is what the alert route needs: the current state for the
// dashboard (alerts.List).
type Alerts interface {
	// List returns the firing alerts, each rule's last outcome and up to
	// limit recent events.
	List(ctx context.Context, limit int) (any, error)
}

// AlertRoutes registers GET /api/v1/alerts (read scope): what fires now,
// the rules' last evaluation and the latest events (limit, default 50).
func AlertRoutes(a Alerts) func(s *Server) {
	return func(s *Server) {
		s.Route("GET /api/v1/alerts", crawlkeeper.ScopeRead, func(w http.ResponseWriter, r *http.Request) error {
			limit := 50
			if l := r.URL.Query().Get("limit"); l != "" {
				n, err := strconv.Atoi(l)
				if err != nil || n < 1 || n > 1000 {
					return crawlkeeper.Errorf(crawlkeeper.EINVALID, "limit=%q: use a number from 1 to 1000", l)
				}
				limit = n
			}
			out, err := a.List(r.Context(), limit)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		})
	}
}
