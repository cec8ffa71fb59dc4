package httpapi_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/httpapi"
	"github.com/crawlkeeper/crawlkeeper/roaringmon"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

type fakePipeline struct{}

func (fakePipeline) Status(context.Context) (any, error) { return map[string]int{"pass": 1}, nil }
func (fakePipeline) Retry(context.Context, []int64) (any, error) {
	return map[string]int{"retried": 0}, nil
}

var scopeTokens = []crawlkeeper.TokenConfig{
	{Name: "reader", Token: "tok-read-5f2a", Scopes: []string{"read"}},
	{Name: "crawler", Token: "tok-ingest-91c3", Scopes: []string{"ingest"}},
	{Name: "boss", Token: "tok-admin-77d0", Scopes: []string{"admin"}},
}

// TestScopes checks every API route against every kind of token: 401
// without a token or with an unknown one, 403 with a token lacking the
// route's scope, and never an authentication error (nor a 5xx) with the
// right one. admin carries every scope.
func TestScopes(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mon, err := roaringmon.Open(context.Background(), st, crawlkeeper.MonitorOptions{}.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	var logs bytes.Buffer
	clock := func() time.Time { return t0 }
	cfg := &crawlkeeper.Config{}
	api := &httpapi.Server{
		Store: st, Config: cfg, Tokens: scopeTokens, Now: clock,
		Ingester: &crawlkeeper.Ingester{Store: st, Config: cfg, Now: clock},
		Archiver: &crawlkeeper.Archiver{Store: st, Config: cfg, Now: clock},
		Logger:   slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Extra: []func(*httpapi.Server){httpapi.MonitorRoutes(mon), httpapi.PipelineRoutes(fakePipeline{}),
			httpapi.RecrawlRoutes(&crawlkeeper.Advisor{Store: st, Monitor: mon, Now: clock})},
	}
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()
	f := &fixture{t: t, srv: srv, api: api}
	f.do("POST", "/api/v1/items", "tok-ingest-91c3", `{"title":"s","url":"https://s.test/"}`, nil)

	routes := []struct{ method, path, scope, body string }{
		{"POST", "/api/v1/items", "ingest", `{"title":"s","url":"https://s.test/"}`},
		{"GET", "/api/v1/records", "read", ""},
		{"GET", "/api/v1/records/1", "read", ""},
		{"GET", "/api/v1/records/1/history", "read", ""},
		{"POST", "/api/v1/records/1/restore", "admin", ""},
		{"POST", "/api/v1/archive?dry_run=true", "admin", ""},
		{"GET", "/api/v1/archive/runs", "read", ""},
		{"GET", "/api/v1/stats", "read", ""},
		{"GET", "/api/v1/search?q=s", "read", ""},
		{"GET", "/api/v1/next?source=&budget=10/day", "read", ""},
		{"GET", "/api/v1/recrawl", "read", ""},
		{"GET", "/api/v1/rounds", "read", ""},
		{"GET", "/api/v1/rounds/1", "read", ""},
		{"GET", "/api/v1/rounds/1/remaining", "read", ""},
		{"GET", "/api/v1/rounds/1/failed", "read", ""},
		{"GET", "/api/v1/rounds/1/diff/2", "read", ""},
		{"POST", "/api/v1/rounds/1/queue", "ingest", "a\nb\n"},
		{"POST", "/api/v1/rounds/1/done", "ingest", "a\n"},
		{"POST", "/api/v1/rounds/1/fail", "ingest", "b\n"},
		{"GET", "/api/v1/targets/a", "read", ""},
		{"GET", "/api/v1/fields", "read", ""},
		{"GET", "/api/v1/scan", "read", ""},
		{"GET", "/api/v1/deadletters", "read", ""},
		{"POST", "/api/v1/deadletters/retry", "admin", ""},
	}
	tokenFor := []struct{ who, token string }{{"none", ""}, {"wrong", "nope"}, {"read", "tok-read-5f2a"}, {"ingest", "tok-ingest-91c3"}, {"admin", "tok-admin-77d0"}}
	for _, r := range routes {
		for _, k := range tokenFor {
			want := 0 // any status that is not an authentication error
			switch {
			case k.who == "none" || k.who == "wrong":
				want = 401
			case k.who != "admin" && k.who != r.scope:
				want = 403
			}
			var e httpapi.ErrorBody
			code := f.do(r.method, r.path, k.token, r.body, &e)
			if want != 0 && (code != want || e.Error.Code == "") {
				t.Errorf("%s %s with %s token: %d %+v, want %d", r.method, r.path, k.who, code, e, want)
			}
			if want == 0 && (code == 401 || code == 403 || code >= 500) {
				t.Errorf("%s %s with %s token: %d %+v, want access", r.method, r.path, k.who, code, e)
			}
		}
	}
	// Tokens are secrets: no log line may contain one.
	for _, tok := range scopeTokens {
		if strings.Contains(logs.String(), tok.Token) {
			t.Errorf("the log contains the token of %s", tok.Name)
		}
	}
	if !strings.Contains(logs.String(), "token=boss") {
		t.Errorf("the log should name the token used (boss): %.500s", logs.String())
	}
	// A bearer token is never accepted from the query string.
	res, err := http.Get(srv.URL + "/api/v1/stats?access_token=tok-read-5f2a")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Errorf("token in the query string: %d, want 401", res.StatusCode)
	}
}
