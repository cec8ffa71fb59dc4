package mongodb

import (
	"fmt"
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
)

// TestSearchFilterOnMongoDB checks the filter the store sends to a MongoDB
// server with text indexes (FerretDB, where the suite runs, has none):
// $text with the query's whole words, and one anchored regular expression
// per term that makes the match exact.
func TestSearchFilterOnMongoDB(t *testing.T) {
	s := &Store{}
	p, err := crawlkeeper.SearchQuery{Text: `"open day" uni* -closed open`, Source: "en"}.Plan()
	if err != nil {
		t.Fatal(err)
	}
	filter, text := s.searchFilter(p)
	got := fmt.Sprint(filter)
	want := `{"$text":{"$search":"open day","$language":"none"},"$and":[{"search_text":{"$regularExpression":{"pattern":"(^| )open day( |$)","options":""}}},{"search_text":{"$regularExpression":{"pattern":"(^| )uni","options":""}}},{"search_text":{"$not":{"$regularExpression":{"pattern":"(^| )closed( |$)","options":""}}}},{"search_text":{"$regularExpression":{"pattern":"(^| )open( |$)","options":""}}}],"source":"en"}`
	if !text || got != want {
		t.Errorf("filter = %s (text %v)\nwant     %s", got, text, want)
	}
	// A query of prefixes alone cannot use $text.
	p, _ = crawlkeeper.SearchQuery{Text: "uni*"}.Plan()
	if _, text := s.searchFilter(p); text {
		t.Error("a prefix-only query uses $text")
	}
	// Without a text index (FerretDB) only the regular expressions remain.
	s.noTextIndex = "FerretDB"
	p, _ = crawlkeeper.SearchQuery{Text: "open"}.Plan()
	if filter, text := s.searchFilter(p); text || fmt.Sprint(filter) != `{"$and":[{"search_text":{"$regularExpression":{"pattern":"(^| )open( |$)","options":""}}}]}` {
		t.Errorf("filter without a text index = %v", filter)
	}
}
