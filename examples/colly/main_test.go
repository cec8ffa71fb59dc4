package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/backends"
	"github.com/crawlkeeper/crawlkeeper/httpapi"
)

// site is a small static site: four pages that link to each other, a
// broken link and a link to another host, which is not followed.
func site(aboutText string) fstest.MapFS {
	page := func(title, body string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("<!doctype html><html><head><title>" + title + "</title></head><body><h1>" + title + "</h1>" + body + "</body></html>")}
	}
	return fstest.MapFS{
		"index.html":  page("Home", `<a href="/about.html">About</a> <a href="/docs/a.html">A</a> <a href="/missing.html">gone</a> <a href="https://elsewhere.example/">out</a>`),
		"about.html":  page("About", "<p>"+aboutText+"</p><a href=\"/\">home</a>"),
		"docs/a.html": page("Doc A", `<h2>Part 1</h2><h2>Part 2</h2><a href="b.html">next</a>`),
		"docs/b.html": page("Doc B", `<p>last page</p><a href="a.html">previous</a>`),
	}
}

func TestCrawlIntoCrawlkeeper(t *testing.T) {
	ctx := context.Background()
	st, err := backends.OpenStore(ctx, "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mon, err := backends.OpenMonitor(ctx, "", st, crawlkeeper.MonitorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	cfg := &crawlkeeper.Config{}
	_, inStore := mon.(crawlkeeper.TxMarker)
	api := &httpapi.Server{
		Store:    st,
		Config:   cfg,
		Ingester: &crawlkeeper.Ingester{Store: st, Config: cfg, MarksInStore: inStore, Monitor: mon},
		Archiver: &crawlkeeper.Archiver{Store: st, Config: cfg},
		Tokens:   []crawlkeeper.TokenConfig{{Name: "colly", Token: "tok", Scopes: []string{"ingest"}}},
	}
	server := httptest.NewServer(api.Handler())
	defer server.Close()

	var files fstest.MapFS
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.FileServerFS(files).ServeHTTP(w, r)
	}))
	defer web.Close()

	crawl := func(round string) string {
		t.Helper()
		var out, errs bytes.Buffer
		err := run(ctx, []string{"--start", web.URL + "/", "--api", server.URL, "--token", "tok", "--source", "site", "--round", round}, &out, &errs)
		if err != nil {
			t.Fatalf("crawl: %v\n%s", err, errs.String())
		}
		// The broken link is reported and does not stop the crawl.
		if !strings.Contains(errs.String(), "missing.html") {
			t.Errorf("the 404 was not reported: %s", errs.String())
		}
		return out.String()
	}

	files = site("We crawl.")
	if out := crawl("1"); !strings.Contains(out, "crawled 4 pages; sent 4 items") {
		t.Fatalf("first crawl: %s", out)
	}
	status, err := mon.Status(ctx, "1")
	if err != nil || status.Done != 4 {
		t.Fatalf("round 1: %+v %v", status, err)
	}

	files = site("We crawl, and now we also keep.")
	crawl("2")
	page, err := st.List(ctx, crawlkeeper.RecordQuery{Source: "site", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Records) != 4 {
		t.Fatalf("%d records after two crawls, want 4", len(page.Records))
	}
	for _, r := range page.Records {
		want := int64(1)
		if r.Title == "About" {
			want = 2
		}
		if r.Version != want {
			t.Errorf("%s: version %d, want %d", r.Title, r.Version, want)
		}
		if strings.Contains(r.URL, "elsewhere") {
			t.Errorf("followed a link off the site: %s", r.URL)
		}
	}
	if status, _ := mon.Status(ctx, "2"); status == nil || status.Done != 4 {
		t.Fatalf("round 2: %+v", status)
	}
}

func TestRunNeedsAStartURL(t *testing.T) {
	err := run(context.Background(), []string{"--api", "http://127.0.0.1:1"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--start") {
		t.Fatalf("run without --start: %v", err)
	}
}
