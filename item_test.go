package crawlkeeper

import (
	"errors"
	"strings"
	"testing"
)

type readResult struct {
	line int
	data string
	err  string
}

func readAll(t *testing.T, in string, max int) []readResult {
	t.Helper()
	var out []readResult
	err := ReadItems(strings.NewReader(in), max, func(it RawItem) error {
		r := readResult{line: it.Line, data: string(it.Data)}
		if it.Err != nil {
			r.err = it.Err.Error()
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReadItemsLines(t *testing.T) {
	got := readAll(t, "\n\n{\"a\":1}\r\n\n  {\"b\":2}  \n{\"c\":3}", 0)
	want := []readResult{{3, `{"a":1}`, ""}, {5, `{"b":2}`, ""}, {6, `{"c":3}`, ""}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("item %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestReadItemsTooLarge(t *testing.T) {
	big := `{"x":"` + strings.Repeat("a", 200_000) + `"}`
	got := readAll(t, "{\"a\":1}\n"+big+"\n{\"b\":2}\n", 1000)
	if len(got) != 3 || got[0].data != `{"a":1}` || got[2].data != `{"b":2}` || got[2].line != 3 {
		t.Fatalf("got %+v", got)
	}
	if got[1].line != 2 || got[1].data != "" || !strings.Contains(got[1].err, "over the limit of 1000 bytes") {
		t.Fatalf("oversized item = %+v", got[1])
	}
}

func TestReadItemsArray(t *testing.T) {
	got := readAll(t, ` [ {"a":1}, 2, {"b":[1,2]} ] `, 0)
	if len(got) != 3 || got[0].data != `{"a":1}` || got[1].data != "2" || got[2].line != 3 {
		t.Fatalf("got %+v", got)
	}
	broken := readAll(t, `[{"a":1}, {"b":}]`, 0)
	if len(broken) != 2 || broken[0].data != `{"a":1}` || broken[1].err == "" || broken[1].line != 2 {
		t.Fatalf("broken array: %+v", broken)
	}
}

func TestReadItemsStopsOnCallbackError(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	err := ReadItems(strings.NewReader("{}\n{}\n{}\n"), 0, func(RawItem) error { n++; return stop })
	if err != stop || n != 1 {
		t.Fatalf("err %v after %d items", err, n)
	}
}

func TestDecodeItem(t *testing.T) {
	base := Meta{Source: "base", Round: "1"}
	m, meta, err := DecodeItem([]byte(`{"_source":"own","_target":"acme","_round":7,"_crawled_at":"2025-01-01","_private":"x","title":"t"}`), base)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Source != "own" || meta.Target != "acme" || meta.Round != "7" || meta.CrawledAt != "2025-01-01" {
		t.Fatalf("meta = %+v", meta)
	}
	if len(m) != 1 || m["title"] != "t" {
		t.Fatalf("fields = %v: metadata must not be stored", m)
	}
	_, meta, _ = DecodeItem([]byte(`{"title":"t","_source":null}`), base)
	if meta.Source != "base" || meta.Round != "1" {
		t.Fatalf("request metadata must apply when the item has none: %+v", meta)
	}

	for _, tc := range []struct{ in, want string }{
		{`[1]`, "is an array, not an object"},
		{`"s"`, "is a string, not an object"},
		{`null`, "is null, not an object"},
		{`{"a":}`, "invalid JSON"},
		{`{"a":1} {"b":2}`, "more than one value"},
		{"{\"a\":\"\xff\"}", "not valid UTF-8"},
		{`{"_source":5}`, "_source must be a string, got a number"},
		{`{"_target":["a"]}`, "_target must be a string, got an array"},
		{`{"_round":-1}`, "_round must be a non-negative integer"},
		{`{"_round":1.5}`, "_round must be a non-negative integer"},
		{`{"_round":true}`, "_round must be an integer or a string"},
		{`{"_round":""}`, "a round is 1 to 128 characters"},
		{`{"_target":"` + strings.Repeat("t", 1025) + `"}`, "metadata _target is 1025 bytes; the limit is 1024"},
		{`{"_source":"` + strings.Repeat("s", 1500) + `"}`, "metadata _source is 1500 bytes; the limit is 1024"},
		{`{"_crawled_at":{"$gt":""}}`, "_crawled_at must be a date string or a Unix time number, got an object"},
		{`{"a":NaN}`, "invalid JSON"},
	} {
		_, _, err := DecodeItem([]byte(tc.in), Meta{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("DecodeItem(%s) = %v, want an error containing %q", tc.in, err, tc.want)
		}
		if ErrorCode(err) != EINVALID {
			t.Errorf("DecodeItem(%s): code %s, want %s", tc.in, ErrorCode(err), EINVALID)
		}
	}
}

func FuzzDecodeItem(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"_round":"x","_target":"t"}`, `[1,2]`, "{\"a\":\"\xff\"}", `{"a":{"b":{"c":[1e999]}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, _, err := DecodeItem(b, Meta{})
		if err != nil {
			if ErrorCode(err) != EINVALID {
				t.Fatalf("error code %s for %q", ErrorCode(err), b)
			}
			return
		}
		for k := range m {
			if strings.HasPrefix(k, "_") {
				t.Fatalf("metadata key %q kept as a field", k)
			}
		}
	})
}

// Request-level metadata is held to the limits of an item's own, and the
// message names the value as the caller spelled it.
func TestMetaValidate(t *testing.T) {
	flags := [3]string{"--source", "--target", "--round"}
	for _, tc := range []struct {
		meta Meta
		want string // "" for valid
	}{
		{Meta{}, ""},
		{Meta{Source: strings.Repeat("s", MaxNameBytes), Target: strings.Repeat("t", MaxNameBytes), Round: "7"}, ""},
		{Meta{Source: "jobs", Target: "acme.example/careers?page=2"}, ""},
		{Meta{Source: strings.Repeat("s", MaxNameBytes+1)}, "--source is 1025 bytes; the limit is 1024"},
		{Meta{Target: strings.Repeat("t", 1500)}, "--target is 1500 bytes; the limit is 1024"},
		{Meta{Source: "caf\xe9"}, "--source is not valid UTF-8"},
		{Meta{Target: "\xff"}, "--target is not valid UTF-8"},
		{Meta{Round: strings.Repeat("7", 129)}, "--round: round"},
		{Meta{Round: "a\nb"}, "control characters"},
	} {
		err := tc.meta.Validate(flags)
		if tc.want == "" {
			if err != nil {
				t.Errorf("Validate(%.40q) = %v, want nil", tc.meta, err)
			}
			continue
		}
		if err == nil || ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), tc.want) {
			t.Errorf("Validate(%.40q) = %v, want EINVALID containing %q", tc.meta, err, tc.want)
		}
	}
}
