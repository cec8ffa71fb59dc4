package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"slices"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
)

// TokenCookie is the cookie that carries a token for browsers. The
// dashboard's login sets it (HttpOnly, SameSite=Strict), and every route
// accepts it as it accepts the Authorization header: a browser cannot add
// a header to a link or a form. SameSite=Strict keeps other sites'
// requests from carrying it, and the cross-origin protection refuses
// their state-changing requests anyway.
const TokenCookie = "crawlkeeper_token"

// TokenCookieValue is the TokenCookie value that carries token: base64url,
// because a token from the configuration may hold bytes a cookie cannot.
func TokenCookieValue(token string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(token))
}

// AuthRequired reports whether the server checks tokens; without tokens
// every route is open (serve then listens on loopback only).
func (s *Server) AuthRequired() bool { return len(s.Tokens) > 0 }

// Authorize checks the request's token (the Authorization bearer header,
// else the TokenCookie) against the configured tokens and scope. It
// returns the token's name for logs (the token itself is never logged);
// admin implies every scope. Without configured tokens, or for an empty
// scope, it allows everything. Errors are EUNAUTHORIZED (no or unknown
// token) or EFORBIDDEN (the token lacks the scope).
func (s *Server) Authorize(r *http.Request, scope string) (string, error) {
	return s.authorize(r, scope)
}

func (s *Server) authorize(r *http.Request, scope string) (string, error) {
	if scope == "" || len(s.Tokens) == 0 {
		return "", nil
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || tok == "" {
		if c, err := r.Cookie(TokenCookie); err == nil && c.Value != "" {
			b, err := base64.RawURLEncoding.DecodeString(c.Value)
			if err != nil {
				return "", crawlkeeper.Errorf(crawlkeeper.EUNAUTHORIZED, "unknown token")
			}
			tok, ok = string(b), true
		}
	}
	if !ok || tok == "" {
		return "", crawlkeeper.Errorf(crawlkeeper.EUNAUTHORIZED, "this route needs a token with scope %q: send it as \"Authorization: Bearer TOKEN\"", scope)
	}
	return s.CheckToken(strings.TrimSpace(tok), scope)
}

// CheckToken checks a token given directly (the dashboard's login form)
// for scope, with Authorize's results.
func (s *Server) CheckToken(tok, scope string) (string, error) {
	if scope == "" || len(s.Tokens) == 0 {
		return "", nil
	}
	t := s.lookupToken(tok)
	if t == nil {
		return "", crawlkeeper.Errorf(crawlkeeper.EUNAUTHORIZED, "unknown token")
	}
	if !slices.Contains(t.Scopes, scope) && !slices.Contains(t.Scopes, crawlkeeper.ScopeAdmin) {
		return t.Name, crawlkeeper.Errorf(crawlkeeper.EFORBIDDEN, "token %q lacks scope %q", t.Name, scope)
	}
	return t.Name, nil
}

// lookupToken compares hashes in constant time, so response timing does
// not reveal how much of a token matched.
func (s *Server) lookupToken(tok string) *crawlkeeper.TokenConfig {
	got := sha256.Sum256([]byte(tok))
	var found *crawlkeeper.TokenConfig
	for i := range s.Tokens {
		want := sha256.Sum256([]byte(s.Tokens[i].Token))
		if subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
			found = &s.Tokens[i]
		}
	}
	return found
}
