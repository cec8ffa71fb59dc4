package mongodb

import (
	"context"

	"github.com/crawlkeeper/crawlkeeper"
	"go.mongodb.org/mongo-driver/v2/bson"
)

var _ crawlkeeper.DateErrorCounter = (*Store)(nil)

// ActiveDateErrors implements crawlkeeper.DateErrorCounter by counting the
// active documents that have date errors, per source, through the index
// on date_errors: a document without errors has no such field or a null,
// which the index keeps apart, so the count reads only the documents it
// counts, never the whole collection.
// Without transactions there are no counters to keep in step with the
// records.
func (s *Store) ActiveDateErrors(ctx context.Context) (map[string]int64, error) {
	cur, err := s.active.Aggregate(ctx, bson.A{
		bson.D{{Key: "$match", Value: bson.D{{Key: "date_errors", Value: bson.D{{Key: "$ne", Value: nil}, {Key: "$not", Value: bson.D{{Key: "$size", Value: 0}}}}}}}},
		bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$source"}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
	})
	if err != nil {
		return nil, s.wrap("date error counts", err)
	}
	var rows []struct {
		Source string `bson:"_id"`
		N      int64  `bson:"n"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		return nil, s.wrap("date error counts", err)
	}
	out := map[string]int64{}
	for _, r := range rows {
		out[r.Source] = r.N
	}
	return out, nil
}

// RecountDateErrors implements crawlkeeper.DateErrorCounter: the counts
// are read from the records, so there is nothing to rebuild.
func (s *Store) RecountDateErrors(context.Context) error { return nil }
