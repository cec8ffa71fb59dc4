package mongodb_test

import (
	"context"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
	"github.com/crawlkeeper/crawlkeeper/mongodb"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestArchiveIndexes checks that the archive has the indexes of active
// (plus archived_at), and that check reports a dropped index with the way
// to restore it, which the next open does.
func TestArchiveIndexes(t *testing.T) {
	ctx := context.Background()
	u := testdb.MongoURL(t)
	s := testdb.MustOpen(t, u, mongodb.Open)
	keys := func(coll string) map[string]bool {
		t.Helper()
		cur, err := s.Database().Collection(coll).Indexes().List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ix []struct {
			Key bson.D `bson:"key"`
		}
		if err := cur.All(ctx, &ix); err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, i := range ix {
			var names []string
			for _, e := range i.Key {
				names = append(names, e.Key)
			}
			out[strings.Join(names, ",")] = true
		}
		return out
	}
	active, archive := keys("active"), keys("archive")
	for k := range active {
		if !archive[k] {
			t.Errorf("active has an index on %s, the archive has not", k)
		}
	}
	for _, k := range []string{"crawled_at,_id", "archived_at,_id", "key", "source,last_updated_at"} {
		if !archive[k] {
			t.Errorf("the archive has no index on %s", k)
		}
	}
	if rep, err := s.Check(ctx); err != nil || !rep.OK {
		t.Fatalf("check of a new store: %+v %v", rep, err)
	}

	if err := s.Database().Collection("archive").Indexes().DropOne(ctx, "crawled_at_1__id_1"); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK || len(rep.Violations) != 1 || rep.Violations[0].Kind != "index_missing" ||
		!strings.Contains(rep.Violations[0].Message, "db.archive.createIndex({crawled_at: 1, _id: 1})") {
		t.Fatalf("check after dropping an index: %+v", rep)
	}
	// Opening the store creates it again.
	if rep, err := testdb.MustOpen(t, u, mongodb.Open).Check(ctx); err != nil || !rep.OK {
		t.Fatalf("check after reopening: %+v %v", rep, err)
	}
}
