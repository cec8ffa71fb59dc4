package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
)

type hostileCase struct {
	Name   string `json:"name"`
	Raw    string `json:"raw"`
	RawB64 string `json:"raw_b64"`
}

// hostileCorpus reads testdata/hostile/corpus.jsonl (malformed and
// hostile items) and adds the cases too large to keep in a file.
func hostileCorpus(t *testing.T) []hostileCase {
	t.Helper()
	f, err := os.Open("../testdata/hostile/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []hostileCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 4<<20)
	for sc.Scan() {
		var c hostileCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if c.RawB64 != "" {
			b, err := base64.StdEncoding.DecodeString(c.RawB64)
			if err != nil {
				t.Fatal(err)
			}
			c.Raw = string(b)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	ten := `{"title":"ten megabytes","url":"https://big/1","body":"` + strings.Repeat("x", 10<<20) + `"}`
	out = append(out, hostileCase{Name: "10 MB line", Raw: ten},
		hostileCase{Name: "10 MB of one string without newline", Raw: strings.Repeat("a", 10<<20)})
	return out
}

func post(t *testing.T, f *fixture, path, body string) (int, map[string]any) {
	t.Helper()
	res, err := http.Post(f.srv.URL+path, "application/x-ndjson", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("POST %s: status %d, body is not JSON: %.200q", path, res.StatusCode, b)
	}
	return res.StatusCode, m
}

// TestHostileItems sends every case of the corpus, alone and all together:
// each is stored safely as data or rejected with a message, the API
// answers 4xx (never 5xx), and the store's invariants hold.
func TestHostileItems(t *testing.T) {
	if testing.Short() {
		t.Skip("sends about 40 MB of hostile input")
	}
	f := newFixture(t, nil, &crawlkeeper.Config{Limits: crawlkeeper.LimitsConfig{MaxBodyBytes: 64 << 20}})
	cases := hostileCorpus(t)
	if len(cases) < 100 {
		t.Fatalf("the corpus has %d cases, want at least 100", len(cases))
	}
	stored, rejected := 0, 0
	for _, c := range cases {
		code, body := post(t, f, "/api/v1/items?source=hostile", c.Raw)
		if code >= 500 {
			t.Errorf("%s: status %d: %v", c.Name, code, body)
			continue
		}
		switch code {
		case 200:
			stored++
		case 400, 413:
			rejected++
			errs, _ := body["errors"].([]any)
			stopped, _ := body["stopped"].(string)
			apiErr, _ := body["error"].(map[string]any)
			if len(errs) == 0 && stopped == "" && apiErr == nil {
				t.Errorf("%s: rejected without a reason: %v", c.Name, body)
			}
			for _, e := range errs {
				if msg, _ := e.(map[string]any)["error"].(string); msg == "" {
					t.Errorf("%s: empty error message: %v", c.Name, body)
				}
			}
		default:
			t.Errorf("%s: unexpected status %d: %v", c.Name, code, body)
		}
	}
	// All at once, one per line: the valid ones are stored, the rest
	// rejected one by one, and nothing fails as a whole.
	var all bytes.Buffer
	for _, c := range cases {
		all.WriteString(strings.ReplaceAll(c.Raw, "\n", " "))
		all.WriteByte('\n')
	}
	code, body := post(t, f, "/api/v1/items?source=hostile-batch", all.String())
	if code != 400 || body["rejected"].(float64) == 0 || body["inserted"].(float64) == 0 {
		t.Errorf("all at once: %d %v", code, summaryOnly(body))
	}
	if stored == 0 || rejected == 0 {
		t.Fatalf("stored %d, rejected %d: the corpus should have both", stored, rejected)
	}
	rep, err := f.api.Store.Check(context.Background())
	if err != nil || !rep.OK {
		t.Fatalf("check after hostile input: %+v %v", rep, err)
	}
	// Stored hostile strings come back unchanged through the API.
	var page struct{ Records []crawlkeeper.Record }
	f.do("GET", "/api/v1/records?q="+url.QueryEscape("' OR 1=1 --"), "", "", &page)
	if len(page.Records) == 0 || page.Records[0].Title != "' OR 1=1 --" {
		t.Fatalf("an injection string as data: %+v", page.Records)
	}
	t.Logf("%d hostile cases: %d stored as data, %d rejected", len(cases), stored, rejected)
}

func summaryOnly(m map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"read", "inserted", "rejected", "changed", "unchanged"} {
		out[k] = m[k]
	}
	return out
}

// TestHostileFilters sends injection strings and path tricks to the read
// routes: 4xx or an empty result, never 5xx.
func TestHostileFilters(t *testing.T) {
	f := newFixture(t, nil, nil)
	f.do("POST", "/api/v1/items", "", `{"title":"a","url":"https://f.test/a"}`, nil)
	values := []string{`{"$gt":""}`, `' OR 1=1 --`, `"; DROP TABLE active; --`, `%`, `_`, `\`, `%00`, "\x00", `../../etc/passwd`,
		strings.Repeat("x", 5000), `$where`, `1e309`, `-1`, `NaN`, "\xff\xfe", `{{.}}`, `<script>`, `*`, `[]`, `null`}
	for _, v := range values {
		for _, key := range []string{"q", "source", "round", "target", "since", "cursor", "limit", "archived", "nonsense"} {
			path := "/api/v1/records?" + key + "=" + url.QueryEscape(v)
			req, _ := http.NewRequest("GET", f.srv.URL+path, nil)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode >= 500 {
				t.Errorf("GET %s: %d", path, res.StatusCode)
			}
		}
	}
	for _, p := range []string{"/api/v1/records/..%2F..%2Fetc%2Fpasswd", "/api/v1/records/1;DROP", "/api/v1/records/-1", "/api/v1/records/0",
		"/api/v1/records/99999999999999999999999", "/api/v1/records/%00", "/api/v1/records/1e3/history", "/api/v1/rounds/%00", "/api/v1/targets/..%2F.."} {
		res, err := http.Get(f.srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode < 400 || res.StatusCode >= 500 {
			t.Errorf("GET %s: %d, want 4xx", p, res.StatusCode)
		}
	}
}

// FuzzParseRecordQuery feeds arbitrary query strings to the records filter
// parser: it returns a query or an EINVALID error, never panics.
func FuzzParseRecordQuery(f *testing.F) {
	for _, s := range []string{"source=a&q=b", "limit=10&cursor=MTIz", "since=2025-01-01T00:00:00Z", "archived=true", "q=%7B%22%24gt%22%3A%22%22%7D", "limit=-1", "bogus=1", "round=7&target=acme", "round=%09"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, err := httpapiParse(v)
		if err != nil {
			if crawlkeeper.ErrorCode(err) != crawlkeeper.EINVALID {
				t.Fatalf("%q: code %s", raw, crawlkeeper.ErrorCode(err))
			}
			return
		}
		if q.Limit < 1 || q.Limit > 1000 {
			t.Fatalf("%q: limit %d out of bounds", raw, q.Limit)
		}
	})
}
