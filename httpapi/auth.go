package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"slices"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
)

// authorize checks the request's bearer token against the configured
// tokens and the route's scope. It returns the token's name for logs (the
// token itself is never logged). admin implies every scope.
func (s *Server) authorize(r *http.Request, scope string) (string, error) {
	if scope == "" || len(s.Tokens) == 0 {
		return "", nil
	}
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || tok == "" {
		return "", crawlkeeper.Errorf(crawlkeeper.EUNAUTHORIZED, "this route needs a token with scope %q: send it as \"Authorization: Bearer TOKEN\"", scope)
	}
	t := s.lookupToken(strings.TrimSpace(tok))
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
