package client_test

import (
	"context"
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/client"
)

func TestSearch(t *testing.T) {
	ctx := context.Background()
	hs := apiServer(t, nil)
	c, err := client.New(client.Options{URL: hs.URL, Token: "rw", Source: "news"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Send(ctx,
		map[string]any{"title": "Straßenfest in München", "url": "https://c.test/1", "body": "Musik und Essen"},
		map[string]any{"title": "北京大学开放日", "url": "https://c.test/2"},
		map[string]any{"title": "Street festival", "url": "https://c.test/3"},
	); err != nil {
		t.Fatal(err)
	}
	page, err := c.Search(ctx, crawlkeeper.SearchQuery{Text: "strassenfest munchen", Source: "news"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Hits) != 1 || page.Hits[0].Record.Title != "Straßenfest in München" || len(page.Hits[0].Snippet) == 0 {
		t.Fatalf("search: %+v", page)
	}
	page, err = c.Search(ctx, crawlkeeper.SearchQuery{Text: "大学"})
	if err != nil || len(page.Hits) != 1 {
		t.Fatalf("CJK search: %+v %v", page, err)
	}
	// Pages of one, newest first, follow the cursor.
	q := crawlkeeper.SearchQuery{Text: "str*", Limit: 1, Order: crawlkeeper.SearchNewest}
	var n int
	for {
		page, err := c.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Hits)
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	if n != 2 {
		t.Errorf("paging str* found %d records, want 2", n)
	}
	// Round and target filters reach the server.
	if _, err := c.Send(ctx, map[string]any{"title": "Street festival", "url": "https://c.test/3", "_round": "r3", "_target": "city"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		q    crawlkeeper.SearchQuery
		want int
	}{
		{crawlkeeper.SearchQuery{Text: "str*", Round: "r3"}, 1},
		{crawlkeeper.SearchQuery{Text: "str*", Round: "r3", Target: "city"}, 1},
		{crawlkeeper.SearchQuery{Text: "str*", Target: "town"}, 0},
		{crawlkeeper.SearchQuery{Text: "str*", Round: "r4"}, 0},
	} {
		page, err := c.Search(ctx, f.q)
		if err != nil || len(page.Hits) != f.want {
			t.Errorf("search %+v: %+v %v, want %d hits", f.q, page, err, f.want)
		} else if f.want == 1 && (page.Hits[0].Record.LastRound != "r3" || page.Hits[0].Record.LastTarget != "city") {
			t.Errorf("search %+v: record %+v", f.q, page.Hits[0].Record)
		}
	}
	if _, err := c.Search(ctx, crawlkeeper.SearchQuery{Text: "-only"}); client.ErrorCode(err) != crawlkeeper.EINVALID {
		t.Errorf("bad query: %v, want EINVALID", err)
	}
	w, _ := client.New(client.Options{URL: hs.URL, Token: "w"})
	defer w.Close(ctx)
	if _, err := w.Search(ctx, crawlkeeper.SearchQuery{Text: "x"}); client.ErrorCode(err) != crawlkeeper.EFORBIDDEN {
		t.Errorf("search with an ingest-only token: %v, want EFORBIDDEN", err)
	}
}
