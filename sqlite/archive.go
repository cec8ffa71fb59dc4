package sqlite

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
)

// parseDue reads the rows packed by SelectDue, "id,version,updated,at;...",
// and returns them in (at, id) order, each with its At.
func parseDue(packed string) ([]crawlkeeper.DueRecord, error) {
	out := make([]crawlkeeper.DueRecord, 0, strings.Count(packed, ";")+1)
	for packed != "" {
		var row string
		row, packed, _ = strings.Cut(packed, ";")
		var f [4]int64
		for k := range f {
			var field string
			field, row, _ = strings.Cut(row, ",")
			n, err := strconv.ParseInt(field, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("select due: bad row value %q", field)
			}
			f[k] = n
		}
		out = append(out, crawlkeeper.DueRecord{ID: f[0], Version: f[1], LastUpdatedAt: crawlkeeper.MicrosTime(f[2]), At: crawlkeeper.MicrosTime(f[3])})
	}
	byCursor := func(a, b crawlkeeper.DueRecord) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.ID, b.ID))
	}
	// Usually already in order: checking is one pass.
	if !slices.IsSortedFunc(out, byCursor) {
		slices.SortFunc(out, byCursor)
	}
	return out, nil
}

var _ crawlkeeper.LifetimeReader = (*Store)(nil)
