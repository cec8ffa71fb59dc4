package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/httpapi"
)

// TestTokenCookie checks that the dashboard's cookie authenticates like the
// bearer header, that the header wins when both are sent, and that
// CheckToken and AuthRequired agree with the routes.
func TestTokenCookie(t *testing.T) {
	tokens := []crawlkeeper.TokenConfig{
		{Name: "reader", Token: "tok-read", Scopes: []string{"read"}},
		{Name: "boss", Token: "tok-admin", Scopes: []string{"admin"}},
		{Name: "odd", Token: "tok; odd", Scopes: []string{"read"}},
	}
	f := newFixture(t, tokens, nil)
	get := func(cookie, bearer string) int {
		req, _ := http.NewRequest("GET", f.srv.URL+"/api/v1/stats", nil)
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: httpapi.TokenCookie, Value: httpapi.TokenCookieValue(cookie)})
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	// A cookie that is not base64url is refused, not taken as a token.
	req, _ := http.NewRequest("GET", f.srv.URL+"/api/v1/stats", nil)
	req.AddCookie(&http.Cookie{Name: httpapi.TokenCookie, Value: "tok-read"})
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 401 {
		t.Fatalf("raw token in the cookie: %v %v, want 401", res.StatusCode, err)
	}
	for _, c := range []struct {
		name           string
		cookie, bearer string
		want           int
	}{
		{"no credentials", "", "", 401},
		{"read cookie", "tok-read", "", 200},
		{"unknown cookie", "nope", "", 401},
		{"header wins over cookie", "tok-read", "nope", 401},
		{"admin header", "", "tok-admin", 200},
		{"token with a space and a semicolon", "tok; odd", "", 200},
	} {
		if got := get(c.cookie, c.bearer); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	// An admin route with a read cookie is forbidden, with an admin
	// cookie allowed.
	for cookie, want := range map[string]int{"tok-read": 403, "tok-admin": 200} {
		req, _ := http.NewRequest("POST", f.srv.URL+"/api/v1/archive?dry_run=true", nil)
		req.AddCookie(&http.Cookie{Name: httpapi.TokenCookie, Value: httpapi.TokenCookieValue(cookie)})
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("POST archive with cookie %s: %d, want %d", cookie, res.StatusCode, want)
		}
	}

	if !f.api.AuthRequired() {
		t.Error("AuthRequired = false with tokens")
	}
	if name, err := f.api.CheckToken("tok-admin", "read"); err != nil || name != "boss" {
		t.Errorf("CheckToken(admin, read) = %q, %v", name, err)
	}
	if _, err := f.api.CheckToken("tok-read", "admin"); crawlkeeper.ErrorCode(err) != crawlkeeper.EFORBIDDEN {
		t.Errorf("CheckToken(read, admin) = %v, want forbidden", err)
	}
	if _, err := f.api.CheckToken("", "read"); crawlkeeper.ErrorCode(err) != crawlkeeper.EUNAUTHORIZED {
		t.Errorf("CheckToken(empty) = %v, want unauthorized", err)
	}
	open := newFixture(t, nil, nil)
	if open.api.AuthRequired() {
		t.Error("AuthRequired = true without tokens")
	}
	r, _ := http.NewRequest("POST", "/", nil)
	if _, err := open.api.Authorize(r, "admin"); err != nil {
		t.Errorf("Authorize without tokens: %v", err)
	}
}
