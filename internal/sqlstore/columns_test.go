package sqlstore

import (
	"testing"
)

func TestLikePattern(t *testing.T) {
	for _, tc := range []struct{ q, want string }{
		{"Job", "%job%"},
		{`50%_off!`, `%50!%!_off!!%`},
		{"ÉTÉ", "%ÉtÉ%"},
	} {
		if got := LikePattern(tc.q, '!'); got != tc.want {
			t.Errorf("LikePattern(%q) = %q, want %q", tc.q, got, tc.want)
		}
	}
}
