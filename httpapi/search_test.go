package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/httpapi"
)

func TestSearchAPI(t *testing.T) {
	f := newFixture(t, nil, nil)
	items := strings.Join([]string{
		`{"title":"Tag der offenen Tür","url":"https://s.test/1","body":"Führungen durch die Universität","_source":"de"}`,
		`{"title":"Open day at the university","url":"https://s.test/2","body":"Campus tours","_source":"en"}`,
		`{"title":"University concert","url":"https://s.test/3","_source":"en"}`,
		`{"title":"День открытых дверей","url":"https://s.test/4","_source":"ru"}`,
	}, "\n")
	if code := f.do("POST", "/api/v1/items", "", items, nil); code != 200 {
		t.Fatalf("ingest: %d", code)
	}
	var page crawlkeeper.SearchPage
	if code := f.do("GET", "/api/v1/search?q="+url.QueryEscape("univers*"), "", "", &page); code != 200 {
		t.Fatalf("search: %d", code)
	}
	if len(page.Hits) != 3 || page.Next != "" {
		t.Fatalf("univers* finds %d hits (next %q), want 3", len(page.Hits), page.Next)
	}
	var marked bool
	for _, h := range page.Hits {
		if h.Record.Source == "de" && strings.Contains(crawlkeeper.SnippetString(h.Snippet, "[", "]"), "[Universität]") {
			marked = true
		}
	}
	if !marked {
		t.Errorf("no snippet marks Universität: %+v", page.Hits)
	}
	// Pages of one with a cursor, then filters.
	var ids []int64
	cursor := ""
	for i := 0; i < 5; i++ {
		var p crawlkeeper.SearchPage
		path := "/api/v1/search?q=university&limit=1&order=newest"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		if code := f.do("GET", path, "", "", &p); code != 200 {
			t.Fatalf("%s: %d", path, code)
		}
		for _, h := range p.Hits {
			ids = append(ids, h.Record.ID)
		}
		if cursor = p.Next; cursor == "" {
			break
		}
	}
	if len(ids) != 2 || ids[0] < ids[1] {
		t.Errorf("paging found %v, want the 2 English records, newest first", ids)
	}
	if f.do("GET", "/api/v1/search?q=university&source=en", "", "", &page); len(page.Hits) != 2 {
		t.Errorf("source=en: %d hits", len(page.Hits))
	}
	if f.do("GET", "/api/v1/search?q=дверей", "", "", &page); len(page.Hits) != 1 {
		t.Errorf("Cyrillic: %d hits", len(page.Hits))
	}
	if f.do("GET", "/api/v1/search?q=university&archived=true", "", "", &page); len(page.Hits) != 0 {
		t.Errorf("archive: %d hits", len(page.Hits))
	}
	// Round and target: those of each record's last delivery that
	// carried them.
	rounds := `{"title":"Open day at the university","url":"https://s.test/2","body":"Campus tours","_source":"en","_round":5}` + "\n" +
		`{"title":"University concert","url":"https://s.test/3","_source":"en","_round":"5","_target":"hall"}`
	if code := f.do("POST", "/api/v1/items", "", rounds, nil); code != 200 {
		t.Fatalf("ingest: %d", code)
	}
	for _, c := range []struct {
		params string
		want   int
	}{
		{"round=5", 2}, {"round=5&target=hall", 1}, {"target=hall&source=de", 0}, {"round=6", 0}, {"target=" + url.QueryEscape(`' OR 1=1 --`), 0},
	} {
		page = crawlkeeper.SearchPage{}
		if code := f.do("GET", "/api/v1/search?q=university&"+c.params, "", "", &page); code != 200 || len(page.Hits) != c.want {
			t.Errorf("%s: %d, %d hits, want %d", c.params, code, len(page.Hits), c.want)
		}
	}
	if f.do("GET", "/api/v1/search?q=university&target=hall", "", "", &page); len(page.Hits) != 1 || page.Hits[0].Record.LastRound != "5" || page.Hits[0].Record.LastTarget != "hall" {
		t.Errorf("target=hall: %+v", page.Hits)
	}
	for _, bad := range []string{"", "q=", "q=-x", "q=a&round=%09", "q=a&round=1&round=2", "q=a&order=best", "q=a&limit=0", "q=a&limit=5000", "q=a&since=yesterday",
		"q=a&cursor=zzz", "q=a&q=b", "q=a&bogus=1", "q=a&since=2025-02-01T00:00:00Z&until=2025-01-01T00:00:00Z"} {
		var e httpapi.ErrorBody
		if code := f.do("GET", "/api/v1/search?"+bad, "", "", &e); code != http.StatusBadRequest || e.Error.Code != crawlkeeper.EINVALID {
			t.Errorf("GET /search?%s: %d %+v, want 400 invalid", bad, code, e)
		}
	}
	// Query syntax of the engines underneath is data, never syntax.
	for _, v := range []string{`"`, `""`, `NEAR(a b)`, `a OR b`, `a AND NOT b`, `*`, `a*b`, `'`, `\`, `)(`, `:*`, `!a`, `a <-> b`, `+a -b`,
		`{"$gt":""}`, `$where`, "\x00", "\xff", strings.Repeat("x ", 40), `^a`, `a:b`, `col:a`, `a^b`} {
		path := "/api/v1/search?q=" + url.QueryEscape(v)
		res, err := http.Get(f.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 && res.StatusCode != 400 {
			t.Errorf("GET %s: %d, want 200 or 400", path, res.StatusCode)
		}
	}
}
