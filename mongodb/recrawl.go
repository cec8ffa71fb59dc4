package mongodb

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
)

var _ crawlkeeper.RecrawlStore = (*Store)(nil)

// recrawlDoc is the projection RecrawlRecords reads: no item, no search
// text.
type recrawlDoc struct {
	ID            int64     `bson:"_id"`
	URL           string    `bson:"url"`
	LastTarget    string    `bson:"last_target"`
	CrawledAt     int64     `bson:"crawled_at"`
	LastUpdatedAt int64     `bson:"last_updated_at"`
	LastChangedAt int64     `bson:"last_changed_at"`
	EventAt       *int64    `bson:"event_at"`
	Fetches       *fetchDoc `bson:"fetches"`
}

// RecrawlRecords implements crawlkeeper.RecrawlStore with one find on the
// source index, projected to the fields the advisor reads.
func (s *Store) RecrawlRecords(ctx context.Context, source string) ([]crawlkeeper.RecrawlRecord, error) {
	proj := bson.D{}
	for _, f := range []string{"_id", "url", "last_target", "crawled_at", "last_updated_at", "last_changed_at", "event_at", "fetches"} {
		proj = append(proj, bson.E{Key: f, Value: 1})
	}
	cur, err := s.active.Find(ctx, bson.D{{Key: "source", Value: source}}, options.Find().SetProjection(proj))
	if err != nil {
		return nil, s.wrap("read the recrawl counters", err)
	}
	defer cur.Close(ctx)
	var out []crawlkeeper.RecrawlRecord
	for cur.Next(ctx) {
		var d recrawlDoc
		if err := cur.Decode(&d); err != nil {
			return nil, s.wrap("read the recrawl counters", err)
		}
		r := crawlkeeper.RecrawlRecord{
			ID: d.ID, URL: d.URL, Target: d.LastTarget,
			CrawledAt:     crawlkeeper.MicrosTime(d.CrawledAt),
			LastUpdatedAt: crawlkeeper.MicrosTime(d.LastUpdatedAt),
			LastChangedAt: crawlkeeper.MicrosTime(d.LastChangedAt),
			EventAt:       sqlstore.Time(d.EventAt),
		}
		if d.Fetches != nil {
			f := crawlkeeper.FetchCounts(*d.Fetches)
			r.Fetches = &f
		}
		out = append(out, r)
	}
	if err := cur.Err(); err != nil {
		return nil, s.wrap("read the recrawl counters", err)
	}
	return out, nil
}
