package mongodb

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
	"github.com/crawlkeeper/crawlkeeper/recrawl"
)

var _ crawlkeeper.RecrawlStore = (*Store)(nil)

// recrawlDoc is the projection RecrawlRecords reads: no item, no name.
type recrawlDoc struct {
	ID            int64     `bson:"_id"`
	LastUpdatedAt int64     `bson:"last_updated_at"`
	EventAt       *int64    `bson:"event_at"`
	Fetches       *fetchDoc `bson:"fetches"`
}

// nameDoc is the projection RecrawlNames reads.
type nameDoc struct {
	ID         int64  `bson:"_id"`
	URL        string `bson:"url"`
	LastTarget string `bson:"last_target"`
}

func projection(fields ...string) bson.D {
	p := bson.D{}
	for _, f := range fields {
		p = append(p, bson.E{Key: f, Value: 1})
	}
	return p
}

// RecrawlRecords implements crawlkeeper.RecrawlStore with one find on the
// source index, projected to the fields the advisor ranks on.
func (s *Store) RecrawlRecords(ctx context.Context, source string) ([]recrawl.Record, error) {
	var out []recrawl.Record
	err := eachDoc(ctx, s, bson.D{{Key: "source", Value: source}}, projection("_id", "last_updated_at", "event_at", "fetches"), func(d *recrawlDoc) {
		var f *crawlkeeper.FetchCounts
		if d.Fetches != nil {
			c := crawlkeeper.FetchCounts(*d.Fetches)
			f = &c
		}
		out = append(out, recrawl.Record{ID: d.ID, Stats: crawlkeeper.RecrawlStats(crawlkeeper.MicrosTime(d.LastUpdatedAt), storeenc.Time(d.EventAt), f)})
	})
	if err != nil {
		return nil, s.wrap("read the recrawl counters", err)
	}
	return out, nil
}

// RecrawlNames implements crawlkeeper.RecrawlStore.
func (s *Store) RecrawlNames(ctx context.Context, source string, ids []int64) ([]crawlkeeper.RecrawlName, error) {
	filter := bson.D{{Key: "source", Value: source}}
	if ids != nil {
		filter = append(filter, bson.E{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}})
	}
	var out []crawlkeeper.RecrawlName
	err := eachDoc(ctx, s, filter, projection("_id", "url", "last_target"), func(d *nameDoc) {
		out = append(out, crawlkeeper.RecrawlName{ID: d.ID, URL: d.URL, Target: d.LastTarget})
	})
	if err != nil {
		return nil, s.wrap("read the names of records", err)
	}
	return out, nil
}

// eachDoc runs a projected find on the active records and fn on each
// document decoded as T.
func eachDoc[T any](ctx context.Context, s *Store, filter, proj bson.D, fn func(*T)) error {
	cur, err := s.active.Find(ctx, filter, options.Find().SetProjection(proj))
	if err != nil {
		return err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var d T
		if err := cur.Decode(&d); err != nil {
			return err
		}
		fn(&d)
	}
	return cur.Err()
}
