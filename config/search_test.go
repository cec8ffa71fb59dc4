package config_test

import (
	"testing"

	"github.com/crawlkeeper/crawlkeeper/config"
)

// TestSearchKeys reads the search settings of a source and the defaults.
func TestSearchKeys(t *testing.T) {
	c, err := config.Parse([]byte("defaults:\n  search_fields: [body, summary]\nsources:\n  de:\n    search_language: german\n    search: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := c.Policy("de")
	if p.Search || p.SearchLanguage != "german" || len(p.SearchFields) != 2 {
		t.Fatalf("%+v", p)
	}
}
