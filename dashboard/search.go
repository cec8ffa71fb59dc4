package dashboard

import (
	"net/http"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/httpapi"
)

// searchHit is one row of the search results: the title with its matches
// marked when the snippet is the title itself.
type searchHit struct {
	crawlkeeper.SearchHit
	TitleParts []crawlkeeper.SnippetPart
}

// searchRecords renders the Records page for a full-text search: the
// best matches first, each with a snippet of its text around the match,
// from the active records or the archive, optionally of one source and
// of one round (that of each record's last delivery that carried one). It
// reads one page through the store's full-text index, like the API's
// GET /search, whose parameter parser it shares.
func (d *dash) searchRecords(w http.ResponseWriter, r *http.Request, v *view) error {
	in := r.URL.Query()
	params := map[string][]string{"q": {in.Get("search")}, "limit": {"50"}}
	for _, k := range []string{"source", "round", "cursor"} {
		if x := in.Get(k); x != "" {
			params[k] = []string{x}
		}
	}
	archived := ""
	if a := in.Get("archived"); a == "on" || a == "true" {
		params["archived"], archived = []string{"true"}, "true"
	}
	q, err := httpapi.ParseSearchQuery(params)
	if err != nil {
		return err
	}
	page, err := crawlkeeper.Search(r.Context(), d.o.Store, d.o.Config, q)
	if err != nil {
		return err
	}
	data := recordsData{
		Query:  crawlkeeper.RecordQuery{Source: q.Source, Archived: q.Archived},
		Search: q.Text,
		Round:  q.Round,
	}
	for _, h := range page.Hits {
		v := searchHit{SearchHit: h}
		// A match in the title alone is marked in the title rather than
		// repeated below it.
		if crawlkeeper.SnippetString(h.Snippet, "", "") == h.Record.Title {
			v.TitleParts, v.Snippet = h.Snippet, nil
		}
		data.Hits = append(data.Hits, v)
	}
	if page.Next != "" {
		data.NextURL = link("/records", "search", q.Text, "source", q.Source, "round", q.Round, "archived", archived, "cursor", page.Next)
	}
	if q.Cursor != "" {
		data.FirstURL = link("/records", "search", q.Text, "source", q.Source, "round", q.Round, "archived", archived)
	}
	v.Title, v.Nav, v.Data = "Records", "records", data
	d.render(w, "records", v)
	return nil
}
