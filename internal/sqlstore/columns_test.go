package sqlstore

import (
	"fmt"
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

func TestDedupeKeepsLast(t *testing.T) {
	got := Dedupe([]IDVersion{{1, 1}, {2, 1}, {1, 2}}, func(x IDVersion) int64 { return x.ID })
	if fmt.Sprint(got) != "[{2 1} {1 2}]" {
		t.Fatalf("Dedupe = %v", got)
	}
}
