package sqlstore

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestDecodeStringsMatchesJSON compares the hand split with
// encoding/json on arrays json.Marshal writes and on others.
func TestDecodeStringsMatchesJSON(t *testing.T) {
	var cases []string
	for _, xs := range [][]string{nil, {}, {""}, {"title=Job A", "url=https://a.test/x?y=1,2"}, {"ünï", "日本語", "a<b>&c"}, {`q"uote`, `back\slash`, "tab\there", "nl\n"}} {
		b, _ := json.Marshal(xs)
		cases = append(cases, string(b))
	}
	cases = append(cases, `[ "spaced" ]`, `["a",]`, `["a""b"]`, `["a"`, `[1]`, `["\u0041"]`, "[\"bad\xffutf8\"]", `[]`, `["",""]`, `["a","b","c"]`, `null`)
	for _, c := range cases {
		var want, got []string
		wantErr := json.Unmarshal([]byte(c), &want)
		gotErr := DecodeStrings(c, &got)
		if (wantErr == nil) != (gotErr == nil) || fmt.Sprintf("%q", want) != fmt.Sprintf("%q", got) || (want == nil) != (got == nil) {
			t.Errorf("%s: got %q (%v), want %q (%v)", c, got, gotErr, want, wantErr)
		}
	}
}

func BenchmarkDecodeStrings(b *testing.B) {
	const s = `["title=Senior data engineer","url=https://jobs.example.com/123456"]`
	var out []string
	for i := 0; i < b.N; i++ {
		if err := DecodeStrings(s, &out); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshalStrings(b *testing.B) {
	const s = `["title=Senior data engineer","url=https://jobs.example.com/123456"]`
	var out []string
	for i := 0; i < b.N; i++ {
		if err := json.Unmarshal([]byte(s), &out); err != nil {
			b.Fatal(err)
		}
	}
}
