package mongodb_test

import (
	"context"
	"sync"
	"testing"

	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
	"github.com/crawlkeeper/crawlkeeper/mongodb"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestConditionalWritesAreAtomic checks what the store builds on: an
// update and a delete conditioned on the same rev of one document never
// both succeed. MongoDB applies each single-document write atomically;
// FerretDB 1.24 does not by itself (290 of 300 such pairs both succeeded),
// which is why the tests' server, tools/ferretdb, runs one command at a time.
func TestConditionalWritesAreAtomic(t *testing.T) {
	ctx := context.Background()
	s, err := mongodb.Open(ctx, testdb.MongoURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := s.Database().Collection("atomicity_probe")
	both := 0
	const tries = 100
	for i := 0; i < tries; i++ {
		if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "rev", Value: 1}}); err != nil {
			t.Fatal(err)
		}
		var updated, deleted int64
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			if r, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "rev", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "rev", Value: 2}}}}); err == nil {
				updated = r.ModifiedCount
			}
		}()
		go func() {
			defer wg.Done()
			if r, err := c.DeleteOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "rev", Value: 1}}); err == nil {
				deleted = r.DeletedCount
			}
		}()
		wg.Wait()
		if updated+deleted != 1 {
			both++
		}
	}
	if both > 0 {
		t.Fatalf("%d of %d pairs of an update and a delete conditioned on the same rev did not end with exactly one applied: the server does not apply conditional single-document writes atomically (with FerretDB, run tools/ferretdb, which serializes commands)", both, tries)
	}
}
