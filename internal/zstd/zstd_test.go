package zstd

import (
	"bytes"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	for _, in := range []string{`{}`, `{"a":1}`, `{"body":"` + strings.Repeat("crawl ", 500) + `"}`} {
		c := Compress(nil, []byte(in))
		if len(c) > len(in) {
			t.Fatalf("compressed %d bytes into %d", len(in), len(c))
		}
		out, err := Decompress(nil, c)
		if err != nil || string(out) != in {
			t.Fatalf("round trip of %d bytes: %v", len(in), err)
		}
	}
	long := []byte(`{"body":"` + strings.Repeat("x", 5000) + `"}`)
	if c := Compress(nil, long); !bytes.HasPrefix(c, magic) || len(c) > len(long)/10 {
		t.Fatalf("a compressible payload was stored as %d bytes", len(c))
	}
	if _, err := Decompress(nil, append(append([]byte{}, magic...), 1, 2, 3)); err == nil {
		t.Fatal("a corrupt frame decompressed without error")
	}
}
