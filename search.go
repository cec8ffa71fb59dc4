package crawlkeeper

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// SearchStore finds records by full-text search on the engine's own
// full-text index (SQLite FTS5, PostgreSQL tsvector/GIN, MySQL/MariaDB
// FULLTEXT, MongoDB text index), which the store maintains in the same
// write as the records: ingest, archive moves, restores and purges keep it
// right, and Check reports index entries that are missing or orphaned.
// The conformance suite is storetest/search.go.
type SearchStore interface {
	// Search returns one page of the records matching q.Text, best first
	// (or newest first, see SearchOrder). Every store returns the same
	// set of records for the same query and data; scores are the
	// engine's and differ between stores. A bad query or cursor is an
	// EINVALID error.
	Search(ctx context.Context, q SearchQuery) (*SearchPage, error)
	// SetSearchText rewrites the search text of records, each only if it
	// is still at the version given (see Reindex). It returns how many
	// were rewritten.
	SetSearchText(ctx context.Context, updates []SearchTextUpdate) (int, error)
}

// SearchTextUpdate is a recomputed search text for one record version.
type SearchTextUpdate struct {
	ID       int64
	Version  int64
	Archived bool
	Text     string
	Language string
}

// SearchOrder is the order of search results.
type SearchOrder int

// Search orders.
const (
	// SearchRelevance orders by the engine's relevance score, best first,
	// then by id.
	SearchRelevance SearchOrder = iota
	// SearchNewest orders by last_updated_at, newest first, then by id.
	SearchNewest
)

// Search limits.
const (
	DefaultSearchLimit = 20
	MaxSearchLimit     = 1000
	// MaxSearchTerms bounds the terms of one query, so a pasted page
	// cannot make one query scan the whole index many times.
	MaxSearchTerms = 32
)

// SearchQuery is a full-text query with its filters.
//
// The round and target filters match the round and target of a record's
// last delivery that carried them (Record.LastRound, Record.LastTarget),
// which every store keeps with the record in the same write: a record
// redelivered in a later round moves to that round, and a delivery
// without _round or _target leaves them as they were. They answer "what
// did round 42 bring" for the records it delivered last; a record
// delivered in rounds 41 and 42 is found under 42 only. The crawl monitor
// answers questions about the targets of a round (`round remaining`).
type SearchQuery struct {
	// Text is the query: words (all must match), "quoted phrases",
	// prefix* words and -excluded words or phrases (see ParseSearch).
	Text string
	// Archived searches the archive instead of the active records.
	Archived bool
	// Source limits the search to one source when set.
	Source string
	// Round and Target keep records whose last round or last target is
	// exactly the value given, each when set (see Record.LastRound).
	Round, Target string
	// Since and Until keep records whose last_updated_at is in
	// [Since, Until), each when set.
	Since, Until time.Time
	// EventFrom and EventTo keep records whose event_at is in
	// [EventFrom, EventTo), each when set; either excludes records
	// without an event date.
	EventFrom, EventTo time.Time
	Order              SearchOrder
	// Languages are the PostgreSQL text search configurations the query is
	// parsed with (the search_language of the sources searched; the
	// PostgreSQL store matches a record indexed with any of them). Search
	// fills it from the configuration; other stores ignore it. Defaults
	// to simple.
	Languages []string
	// Limit is the page size. Defaults to 20; at most 1000.
	Limit int
	// Cursor continues a previous page (SearchPage.Next) of the same
	// query.
	Cursor string
}

// SearchPage is one page of search results.
type SearchPage struct {
	Hits []SearchHit `json:"hits"`
	// Next is the cursor of the following page, empty on the last page.
	Next string `json:"next"`
}

// SearchHit is one matching record.
type SearchHit struct {
	Record *Record `json:"record"`
	// Score is the engine's relevance (higher is better); its scale
	// differs between stores.
	Score float64 `json:"score"`
	// Snippet is a short passage of the record's text around the first
	// match, with the matching words marked (see AddSnippets).
	Snippet []SnippetPart `json:"snippet,omitempty"`
}

// SnippetPart is a piece of a snippet; Match marks a matched word.
type SnippetPart struct {
	Text  string `json:"text"`
	Match bool   `json:"match,omitempty"`
}

// SnippetString renders a snippet with each match between open and close.
func SnippetString(parts []SnippetPart, open, close string) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Match {
			b.WriteString(open)
			b.WriteString(p.Text)
			b.WriteString(close)
		} else {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// SearchPlan is a validated SearchQuery as stores execute it: the parsed
// expression, the page size, and the decoded cursor.
type SearchPlan struct {
	SearchQuery
	Expr *SearchExpr
	// After is the position to continue after; nil on the first page.
	After *SearchCursor
}

// SearchCursor is the position of the last hit of a page: its sort key.
type SearchCursor struct {
	Score         float64
	UpdatedMicros int64
	ID            int64
}

// Plan validates q and fills the defaults. Errors are EINVALID with a
// message that says what to change.
func (q SearchQuery) Plan() (*SearchPlan, error) {
	expr, err := ParseSearch(q.Text)
	if err != nil {
		return nil, err
	}
	p := &SearchPlan{SearchQuery: q, Expr: expr}
	if p.Limit <= 0 {
		p.Limit = DefaultSearchLimit
	}
	if p.Limit > MaxSearchLimit {
		return nil, Errorf(EINVALID, "search limit %d is too large: use at most %d and page with the cursor", p.Limit, MaxSearchLimit)
	}
	if err := validateRoundFilter("search", q.Round, q.Target); err != nil {
		return nil, err
	}
	if p.Order != SearchRelevance && p.Order != SearchNewest {
		return nil, Errorf(EINVALID, "unknown search order %d", p.Order)
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Until.After(q.Since) {
		return nil, Errorf(EINVALID, "search: until (%s) must be after since (%s)", q.Until.Format(time.RFC3339), q.Since.Format(time.RFC3339))
	}
	if !q.EventFrom.IsZero() && !q.EventTo.IsZero() && !q.EventTo.After(q.EventFrom) {
		return nil, Errorf(EINVALID, "search: the event range end (%s) must be after its start (%s)", q.EventTo.Format(time.RFC3339), q.EventFrom.Format(time.RFC3339))
	}
	if p.After, err = decodeSearchCursor(q.Cursor, q.Order); err != nil {
		return nil, err
	}
	return p, nil
}

// EncodeSearchCursor returns the cursor that continues a search after hit.
func EncodeSearchCursor(hit SearchHit, o SearchOrder) string {
	var s string
	if o == SearchNewest {
		s = "n" + strconv.FormatInt(TimeMicros(hit.Record.LastUpdatedAt), 10)
	} else {
		s = "r" + strconv.FormatUint(math.Float64bits(hit.Score), 16)
	}
	s += "." + strconv.FormatInt(hit.Record.ID, 10)
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

func decodeSearchCursor(c string, o SearchOrder) (*SearchCursor, error) {
	if c == "" {
		return nil, nil
	}
	bad := Errorf(EINVALID, "invalid search cursor %q: pass a previous page's next cursor unchanged, with the same query and order", c)
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < 3 {
		return nil, bad
	}
	want := byte('r')
	if o == SearchNewest {
		want = 'n'
	}
	if b[0] != want {
		return nil, bad
	}
	key, idText, ok := strings.Cut(string(b[1:]), ".")
	if !ok {
		return nil, bad
	}
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil {
		return nil, bad
	}
	out := &SearchCursor{ID: id}
	if o == SearchNewest {
		if out.UpdatedMicros, err = strconv.ParseInt(key, 10, 64); err != nil {
			return nil, bad
		}
		return out, nil
	}
	bits, err := strconv.ParseUint(key, 16, 64)
	if err != nil {
		return nil, bad
	}
	out.Score = math.Float64frombits(bits)
	if math.IsNaN(out.Score) {
		return nil, bad
	}
	return out, nil
}

// FinishPage trims hits fetched with one extra row to the plan's limit
// and sets the next cursor. Stores fetch Limit+1 hits so that the last
// page has no cursor.
func (p *SearchPlan) FinishPage(hits []SearchHit) *SearchPage {
	page := &SearchPage{Hits: hits}
	if page.Hits == nil {
		page.Hits = []SearchHit{}
	}
	if len(hits) > p.Limit {
		page.Hits = hits[:p.Limit]
		page.Next = EncodeSearchCursor(page.Hits[p.Limit-1], p.Order)
	}
	return page
}

// Search runs q on st and adds snippets taken from each hit's indexed
// fields under cfg. It is what the CLI, the HTTP API and the dashboard
// call.
func Search(ctx context.Context, st SearchStore, cfg *Config, q SearchQuery) (*SearchPage, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	plan, err := q.Plan()
	if err != nil {
		return nil, err
	}
	if len(q.Languages) == 0 {
		q.Languages = cfg.searchLanguages(q.Source)
	}
	page, err := st.Search(ctx, q)
	if err != nil {
		return nil, err
	}
	AddSnippets(page, plan.Expr, cfg)
	return page, nil
}

// SearchIndexReporter is implemented by a store whose server may lack a
// full-text index: SearchWithoutIndex returns why search runs without one
// there (the MongoDB store on FerretDB, which has no text index), or ""
// when the index is used. Without the index the store still finds the
// same records, by scanning, but does not rank them: every score is 0 and
// relevance order is id order.
type SearchIndexReporter interface {
	SearchWithoutIndex() string
}

// searchLanguages returns the distinct search languages of source, or of
// every configured source and the defaults when source is empty.
func (c *Config) searchLanguages(source string) []string {
	var names []string
	if source != "" {
		names = []string{source}
	} else {
		names = append(names, "")
		for name := range c.Sources {
			names = append(names, name)
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		var pol *SourcePolicy
		var err error
		if n == "" && source == "" {
			pol, err = c.DefaultPolicy()
		} else {
			pol, err = c.Policy(n)
		}
		if err != nil || seen[pol.SearchLanguage] {
			continue
		}
		seen[pol.SearchLanguage] = true
		out = append(out, pol.SearchLanguage)
	}
	sort.Strings(out)
	return out
}

// SearchMissing is the check violation of a record (in collection, active
// or archive) that has no full-text index entry: written before search
// existed, or left without one. Reindex gives it one.
func SearchMissing(collection string, id int64, key string) Violation {
	return Violation{Kind: "search_missing", ID: id, Key: key,
		Message: fmt.Sprintf("%s record %d is not in the full-text index (written before search existed?): run crawlkeeper search --reindex", collection, id)}
}
