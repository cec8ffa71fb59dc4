// Package httpapi is crawlkeeper's HTTP surface: the JSON API under
// /api/v1, Prometheus metrics, health checks, and the mount point of the
// dashboard. Requests are authenticated with bearer tokens that carry
// scopes (ingest, read, admin); without tokens the server only listens on
// loopback (enforced by the serve command).
package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/metrics"
)

// DefaultMaxBodyBytes bounds a request body when the configuration does
// not.
const DefaultMaxBodyBytes = 64 << 20

// Server serves the API. Fields are set before Handler is called.
type Server struct {
	Store    crawlkeeper.Store
	Config   *crawlkeeper.Config
	Ingester *crawlkeeper.Ingester
	Archiver *crawlkeeper.Archiver
	// RunArchive, when set, runs the passes asked for through the API
	// instead of Archiver.Run: serve runs them under the archiver lease.
	RunArchive func(ctx context.Context, opts crawlkeeper.ArchiveOptions) (*crawlkeeper.ArchiveReport, error)
	Metrics    *metrics.Metrics
	// Tokens are the accepted bearer tokens. Empty means no
	// authentication (loopback only).
	Tokens []crawlkeeper.TokenConfig
	Logger *slog.Logger
	Now    func() time.Time
	// Dashboard, when set, serves every path outside /api, /metrics and
	// the health checks.
	Dashboard http.Handler
	// Ready reports whether the server can take traffic (/readyz).
	Ready func(ctx context.Context) error
	// Extra registers more routes (monitor, pipeline, alerts) on the mux
	// through Route, so each capability adds its own handlers.
	Extra []func(s *Server)

	mux *http.ServeMux
}

// Route registers a handler for pattern (a net/http pattern such as
// "GET /api/v1/rounds/{round}") that requires scope; an empty scope means
// no authentication.
func (s *Server) Route(pattern, scope string, h func(w http.ResponseWriter, r *http.Request) error) {
	s.mux.Handle(pattern, s.wrap(pattern, scope, h))
}

// Handler returns the server's handler with every route registered.
func (s *Server) Handler() http.Handler {
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Metrics == nil {
		s.Metrics = metrics.New()
	}
	s.mux = http.NewServeMux()
	s.routes()
	for _, f := range s.Extra {
		f(s)
	}
	s.mux.Handle("GET /metrics", s.Metrics.Handler())
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	s.mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if s.Ready != nil {
			if err := s.Ready(r.Context()); err != nil {
				writeError(w, crawlkeeper.Errorf(crawlkeeper.EUNAVAILABLE, "not ready: %v", err))
				return
			}
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	s.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, crawlkeeper.Errorf(crawlkeeper.ENOTFOUND, "no API route %s %s; docs/API.md lists the routes", r.Method, r.URL.Path))
	})
	if s.Dashboard != nil {
		s.mux.Handle("/", s.Dashboard)
	}
	// Cross-origin protection rejects state-changing requests that a
	// browser marks as cross-site, so a page elsewhere cannot drive the
	// admin API of a loopback server without tokens.
	return securityHeaders(http.NewCrossOriginProtection().Handler(s.mux))
}

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

// statusRecorder remembers the status code for metrics and logs.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// wrap adds authentication, body limits, error mapping, metrics and a log
// line to a handler.
func (s *Server) wrap(route, scope string, h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		var who string
		err := func() error {
			name, err := s.authorize(r, scope)
			who = name
			if err != nil {
				return err
			}
			r.Body = http.MaxBytesReader(rec, r.Body, s.maxBody())
			return h(rec, r)
		}()
		if err != nil {
			err = mapError(err)
			if crawlkeeper.ErrorCode(err) == crawlkeeper.EINTERNAL {
				s.Logger.Error("request failed", "route", route, "err", err)
			}
			writeError(rec, err)
		}
		code := rec.code
		if code == 0 {
			code = http.StatusOK
		}
		s.Metrics.HTTPDuration.WithLabelValues(route, r.Method, strconv.Itoa(code)).Observe(time.Since(start).Seconds())
		s.Logger.Debug("request", "route", route, "status", code, "token", who, "duration", time.Since(start))
	})
}

func (s *Server) maxBody() int64 {
	if s.Config != nil && s.Config.Limits.MaxBodyBytes > 0 {
		return s.Config.Limits.MaxBodyBytes
	}
	return DefaultMaxBodyBytes
}

// mapError turns transport errors into application errors.
func mapError(err error) error {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return crawlkeeper.Errorf(crawlkeeper.ETOOLARGE, "request body over the limit of %d bytes: send smaller batches or raise limits.max_body_bytes", mb.Limit)
	}
	if errors.Is(err, context.Canceled) {
		return crawlkeeper.Errorf(crawlkeeper.EUNAVAILABLE, "request cancelled")
	}
	return err
}

var statusOf = map[string]int{
	crawlkeeper.EINVALID:      http.StatusBadRequest,
	crawlkeeper.ENOTFOUND:     http.StatusNotFound,
	crawlkeeper.ECONFLICT:     http.StatusConflict,
	crawlkeeper.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	crawlkeeper.EUNAUTHORIZED: http.StatusUnauthorized,
	crawlkeeper.EFORBIDDEN:    http.StatusForbidden,
	crawlkeeper.EUNAVAILABLE:  http.StatusServiceUnavailable,
	crawlkeeper.ENOTSUPPORTED: http.StatusNotImplemented,
	crawlkeeper.EINTERNAL:     http.StatusInternalServerError,
}

// StatusOf returns the HTTP status of an error code.
func StatusOf(code string) int {
	if s, ok := statusOf[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// ErrorBody is the JSON body of every error response.
type ErrorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, err error) {
	var b ErrorBody
	b.Error.Code = crawlkeeper.ErrorCode(err)
	b.Error.Message = crawlkeeper.ErrorMessage(err)
	if b.Error.Code == crawlkeeper.EUNAUTHORIZED {
		w.Header().Set("WWW-Authenticate", `Bearer realm="crawlkeeper"`)
	}
	writeJSON(w, StatusOf(b.Error.Code), b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// WriteJSON writes v with status, for handlers registered through Route.
func WriteJSON(w http.ResponseWriter, status int, v any) { writeJSON(w, status, v) }

// Unsupported registers every method under each prefix to answer 501 with
// message: the capability is not available with this configuration.
func Unsupported(prefixes ...string) func(message string) func(s *Server) {
	return func(message string) func(s *Server) {
		return func(s *Server) {
			h := func(w http.ResponseWriter, r *http.Request) error {
				return crawlkeeper.Errorf(crawlkeeper.ENOTSUPPORTED, "%s", message)
			}
			for _, p := range prefixes {
				s.Route(p, crawlkeeper.ScopeRead, h)
				s.Route(p+"/", crawlkeeper.ScopeRead, h)
			}
		}
	}
}
