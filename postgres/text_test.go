package postgres

import (
	"strings"
	"testing"
)

func TestTextEscapeRoundTrips(t *testing.T) {
	for _, s := range []string{"", "plain", "a\x00b", "\x00", "\uffff", "\uffff0", "x\uffff\x00\uffff\uffffy", "0\x000"} {
		e := enc(s)
		if strings.IndexByte(e, 0) >= 0 {
			t.Errorf("enc(%q) = %q still holds NUL", s, e)
		}
		if d := dec(e); d != s {
			t.Errorf("dec(enc(%q)) = %q", s, d)
		}
	}
	if enc("a\x00") == enc("a\uffff0") {
		t.Error("two strings encode the same")
	}
}

func FuzzTextEscape(f *testing.F) {
	f.Add("a\x00b\uffff")
	f.Fuzz(func(t *testing.T, s string) {
		if strings.IndexByte(enc(s), 0) >= 0 || dec(enc(s)) != s {
			t.Fatalf("%q does not round-trip", s)
		}
	})
}
