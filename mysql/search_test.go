package mysql_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
	"github.com/crawlkeeper/crawlkeeper/mysql"
)

// TestSearchUsesIndex checks that every search query reads the table
// through its FULLTEXT index (EXPLAIN's access type "fulltext").
func TestSearchUsesIndex(t *testing.T) {
	s := testdb.MustOpen(t, testdb.MySQLURL(t), mysql.Open)
	ctx := context.Background()
	for _, q := range []crawlkeeper.SearchQuery{
		{Text: "open day"},
		{Text: `"open day" uni* -closed`, Source: "en"},
		{Text: "open", Order: crawlkeeper.SearchNewest},
		{Text: "open", Archived: true},
	} {
		query, args, err := mysql.SearchSQL(s, q)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := s.DB().QueryContext(ctx, "EXPLAIN "+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		var plan []string
		for rows.Next() {
			vals := make([]sql.RawBytes, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var line []string
			for i, c := range cols {
				line = append(line, c+"="+string(vals[i]))
			}
			plan = append(plan, strings.Join(line, " "))
		}
		rows.Close()
		all := strings.Join(plan, "\n")
		if !strings.Contains(all, "type=fulltext") {
			t.Errorf("query %+v does not use the FULLTEXT index:\n%s", q, all)
		}
	}
}
