package mongodb

import (
	"context"
	"fmt"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// missingIndexes returns a violation for every index of indexSets that a
// collection lacks (one dropped by hand after the store was opened, say):
// without it queries still answer, by reading the whole collection.
func (s *Store) missingIndexes(ctx context.Context) ([]crawlkeeper.Violation, error) {
	var out []crawlkeeper.Violation
	for _, set := range s.indexSets() {
		cur, err := set.c.Indexes().List(ctx)
		if err != nil {
			return nil, fmt.Errorf("list the indexes of %s: %w", set.c.Name(), err)
		}
		var have []struct {
			Key    bson.D `bson:"key"`
			Unique bool   `bson:"unique"`
		}
		if err := cur.All(ctx, &have); err != nil {
			return nil, fmt.Errorf("list the indexes of %s: %w", set.c.Name(), err)
		}
		got := map[string]bool{} // key signature → unique
		for _, h := range have {
			var parts []string
			for _, e := range h.Key {
				dir := "1"
				if n, ok := number(e.Value); ok && n < 0 {
					dir = "-1"
				}
				parts = append(parts, e.Key+": "+dir)
			}
			sig := strings.Join(parts, ", ")
			got[sig] = got[sig] || h.Unique
		}
		for _, spec := range set.specs {
			var parts []string
			for _, k := range spec.keys {
				dir := "1"
				if strings.HasPrefix(k, "-") {
					k, dir = k[1:], "-1"
				}
				parts = append(parts, k+": "+dir)
			}
			sig := strings.Join(parts, ", ")
			unique, ok := got[sig]
			if ok && (unique || !spec.unique) {
				continue
			}
			opts, what := "", "no index"
			if spec.unique {
				opts = ", {unique: true}"
				what = "no unique index"
			}
			out = append(out, crawlkeeper.Violation{Kind: "index_missing", Message: fmt.Sprintf(
				"collection %s has %s on {%s}, so queries on it read the whole collection: open the store once with any crawlkeeper command (it creates missing indexes), or run db.%s.createIndex({%s}%s) in mongosh",
				set.c.Name(), what, sig, set.c.Name(), sig, opts)})
		}
	}
	return out, nil
}

// number returns a numeric index direction as an int.
func number(v any) (int, bool) {
	switch n := v.(type) {
	case int32:
		return int(n), true
	case int64:
		return int(n), true
	case float64:
		return int(n), true
	}
	return 0, false
}
