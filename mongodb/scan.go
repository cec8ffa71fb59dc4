package mongodb

import (
	"context"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// ScanActive implements crawlkeeper.ScanStore with a keyset read on _id.
func (s *Store) ScanActive(ctx context.Context, afterID, maxID int64, limit int) ([]*crawlkeeper.Record, error) {
	if limit <= 0 {
		limit = 500
	}
	rng := bson.D{{Key: "$gt", Value: afterID}}
	if maxID > 0 {
		rng = append(rng, bson.E{Key: "$lte", Value: maxID})
	}
	recs, err := findRecords(ctx, s.active, bson.D{{Key: "_id", Value: rng}},
		options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(limit)))
	if err != nil {
		return nil, s.wrap("scan", err)
	}
	return recs, nil
}

// GetMany implements crawlkeeper.ScanStore.
func (s *Store) GetMany(ctx context.Context, ids []int64) ([]*crawlkeeper.Record, error) {
	if len(ids) == 0 {
		return []*crawlkeeper.Record{}, nil
	}
	recs, err := findRecords(ctx, s.active, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}},
		options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, s.wrap("get many", err)
	}
	return recs, nil
}

// MaxID implements crawlkeeper.ScanStore: the id counter, which covers
// ids of records that have since been archived.
func (s *Store) MaxID(ctx context.Context) (int64, error) {
	n, err := s.lastID(ctx)
	return n, s.wrap("max id", err)
}

// WriteProcessed implements crawlkeeper.ScanStore with one update per
// record, conditioned on its version: an update that matches nothing was
// skipped because the record changed or left the active set.
func (s *Store) WriteProcessed(ctx context.Context, ws []crawlkeeper.ProcessedWrite) ([]int64, error) {
	skipped := []int64{}
	// Writes to one record with different versions cannot both apply, so
	// keeping the last of each (id, version) gives the same documents as
	// applying them all.
	last := storeenc.Dedupe(ws, func(p crawlkeeper.ProcessedWrite) storeenc.IDVersion {
		return storeenc.IDVersion{ID: p.ID, Version: p.Version}
	})
	applied := map[storeenc.IDVersion]bool{}
	for _, p := range last {
		set := bson.D{{Key: "processed_at", Value: p.ProcessedAt.UnixMicro()}, {Key: "processed_version", Value: p.Version},
			{Key: "processed_chain", Value: p.Chain}, {Key: "derived", Value: storeenc.Blob(p.Derived)}}
		if p.SetEvent {
			set = append(set, bson.E{Key: "event_at", Value: storeenc.Micros(p.EventAt)}, bson.E{Key: "date_errors", Value: nilIfEmpty(p.DateErrors)})
		}
		res, err := s.active.UpdateOne(ctx, bson.D{{Key: "_id", Value: p.ID}, {Key: "version", Value: p.Version}, unmarked},
			bson.D{{Key: "$set", Value: set}, {Key: "$inc", Value: bson.D{{Key: "rev", Value: 1}}}})
		if err != nil {
			return nil, s.wrap("write processed", err)
		}
		if res.MatchedCount == 1 {
			applied[storeenc.IDVersion{ID: p.ID, Version: p.Version}] = true
		}
	}
	for _, p := range ws {
		if !applied[storeenc.IDVersion{ID: p.ID, Version: p.Version}] {
			skipped = append(skipped, p.ID)
		}
	}
	return skipped, nil
}

// Freshness implements crawlkeeper.ScanStore: it reads the five fields the
// rule needs of every active record and counts them with
// crawlkeeper.FreshnessQuery.Tally. The rule compares fields with each
// other and with the covered spans, which FerretDB's $expr cannot express
// (it lacks $ne there), so the counting happens here.
func (s *Store) Freshness(ctx context.Context, q crawlkeeper.FreshnessQuery) (*crawlkeeper.Freshness, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	cur, err := s.active.Find(ctx, bson.D{}, options.Find().SetBatchSize(5000).SetProjection(bson.D{
		{Key: "version", Value: 1}, {Key: "processed_version", Value: 1}, {Key: "processed_chain", Value: 1}, {Key: "processed_at", Value: 1}}))
	if err != nil {
		return nil, s.wrap("freshness", err)
	}
	defer cur.Close(ctx)
	f := &crawlkeeper.Freshness{}
	for cur.Next(ctx) {
		var d struct {
			ID               int64  `bson:"_id"`
			Version          int64  `bson:"version"`
			ProcessedVersion int64  `bson:"processed_version"`
			ProcessedChain   string `bson:"processed_chain"`
			ProcessedAt      *int64 `bson:"processed_at"`
		}
		if err := cur.Decode(&d); err != nil {
			return nil, s.wrap("freshness", err)
		}
		q.Tally(f, d.ID, d.Version, d.ProcessedVersion, d.ProcessedChain, storeenc.Time(d.ProcessedAt))
	}
	return f, s.wrap("freshness", cur.Err())
}
