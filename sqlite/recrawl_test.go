package sqlite_test

import (
	"context"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

// TestRecrawlReadUsesIndex checks that the advisor's read of a source is
// one range of the per-source index, covered: the packed value comes from
// the index, not from the rows, which the expression in recrawl.go matching
// the migration's makes possible.
func TestRecrawlReadUsesIndex(t *testing.T) {
	s := MustOpenStore(t)
	defer s.Close()
	rows, err := s.ReadDB().QueryContext(context.Background(), "EXPLAIN QUERY PLAN SELECT "+sqlite.RecrawlPack+" FROM active WHERE source = ? AND last_updated_at >= ? AND last_updated_at < ?", "jobs", 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if all := strings.Join(plan, "; "); !strings.Contains(all, "USING COVERING INDEX active_source_last_updated_at (source=? AND last_updated_at>? AND last_updated_at<?)") {
		t.Fatalf("plan %q: the read does not come from the per-source index alone", all)
	}
}
