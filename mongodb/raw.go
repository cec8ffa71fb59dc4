package mongodb

import (
	"context"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The Raw* methods are the benchmark's baselines: the same writes and reads
// done directly with the driver on this store's collections, without
// crawlkeeper's reads before writes, merge, rev conditions, key claims,
// move intents or compression. `crawlkeeper bench --store mongodb://...`
// compares the real paths against them; nothing else uses them.

// RawUpsert writes recs with unordered bulk writes of upserts by _id, in
// the store's command size (bulkChunk).
func (s *Store) RawUpsert(ctx context.Context, recs []*crawlkeeper.Record) error {
	if len(recs) == 0 {
		return nil
	}
	models := make([]mongo.WriteModel, len(recs))
	for i, r := range recs {
		models[i] = mongo.NewReplaceOneModel().SetFilter(bson.D{{Key: "_id", Value: r.ID}}).SetReplacement(toDoc(r, 1)).SetUpsert(true)
	}
	_, err := bulkChunks(ctx, s.active, models)
	return err
}

// RawTouch is the write of a re-crawl: last_updated_at only.
func (s *Store) RawTouch(ctx context.Context, recs []*crawlkeeper.Record, now time.Time) error {
	if len(recs) == 0 {
		return nil
	}
	models := make([]mongo.WriteModel, len(recs))
	for i, r := range recs {
		models[i] = mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: r.ID}}).
			SetUpdate(bson.D{{Key: "$set", Value: bson.D{{Key: "last_updated_at", Value: now.UnixMicro()}}}})
	}
	_, err := bulkChunks(ctx, s.active, models)
	return err
}

// RawChange upserts changed content and inserts the previous versions
// into history.
func (s *Store) RawChange(ctx context.Context, recs []*crawlkeeper.Record, hist []*crawlkeeper.HistoryEntry) error {
	if err := s.RawUpsert(ctx, recs); err != nil {
		return err
	}
	if len(hist) == 0 {
		return nil
	}
	docs := make([]any, len(hist))
	for i, h := range hist {
		docs[i] = historyDoc{ID: historyID(h.RecordID, h.Version), RecordID: h.RecordID, Version: h.Version, Item: h.Item,
			ContentHash: h.ContentHash, ValidFrom: h.ValidFrom.UnixMicro(), ValidTo: h.ValidTo.UnixMicro()}
	}
	_, err := s.history.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	if _, onlyDups := duplicateIndexes(err); err != nil && onlyDups {
		return nil // already there: the ON CONFLICT DO NOTHING of the SQL baselines
	}
	return err
}

// RawSelectAge reads what an age rule selects; with indexed false the
// query is hinted to a collection scan ($natural), as if the index had
// been dropped.
func (s *Store) RawSelectAge(ctx context.Context, cutoff time.Time, indexed bool) (int, error) {
	opts := options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}, {Key: "version", Value: 1}, {Key: "last_updated_at", Value: 1}})
	if !indexed {
		opts.SetHint(bson.D{{Key: "$natural", Value: 1}})
	}
	cur, err := s.active.Find(ctx, bson.D{{Key: "crawled_at", Value: bson.D{{Key: "$lte", Value: cutoff.UnixMicro()}}}}, opts)
	if err != nil {
		return 0, err
	}
	defer cur.Close(ctx)
	n := 0
	for cur.Next(ctx) {
		n++
	}
	return n, cur.Err()
}

// RawMove copies documents to the archive and deletes them from active,
// without intents, conditions or compression.
func (s *Store) RawMove(ctx context.Context, ids []int64, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	in := bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}
	docs, err := findDocs(ctx, s.active, in)
	if err != nil {
		return err
	}
	if len(docs) == 0 {
		return nil
	}
	at := now.UnixMicro()
	out := make([]any, len(docs))
	for i, d := range docs {
		d.ArchivedAt, d.ArchiveReason, d.ItemBytes, d.StoredBytes = &at, string(crawlkeeper.ReasonAge), int64(len(d.Item)), int64(len(d.Item))
		out[i] = d
	}
	if _, err := s.archive.InsertMany(ctx, out, options.InsertMany().SetOrdered(false)); err != nil {
		return err
	}
	_, err = s.active.DeleteMany(ctx, in)
	return err
}

// RawKeyset reads one keyset page of active records in id order, every
// field, and returns the count and last id.
func (s *Store) RawKeyset(ctx context.Context, afterID int64, limit int) (int, int64, error) {
	cur, err := s.active.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: afterID}}}},
		options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(limit)))
	if err != nil {
		return 0, 0, err
	}
	defer cur.Close(ctx)
	n, last := 0, afterID
	for cur.Next(ctx) {
		id, ok := cur.Current.Lookup("_id").AsInt64OK()
		if ok {
			last = id
		}
		n++
	}
	return n, last, cur.Err()
}

// RawArchiveInsert writes recs straight into the archive (compressed, as
// the store keeps them), for building a large archive quickly.
func (s *Store) RawArchiveInsert(ctx context.Context, recs []*crawlkeeper.Record, at time.Time) error {
	if len(recs) == 0 {
		return nil
	}
	docs := make([]any, len(recs))
	for i, r := range recs {
		c := *r
		c.ArchivedAt, c.ArchiveReason = &at, crawlkeeper.ReasonAge
		docs[i] = toDoc(&c, 1)
	}
	_, err := s.archive.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	return err
}

// RawAnalyze does nothing: MongoDB's planner keeps no statistics to
// refresh after a bulk load.
func (s *Store) RawAnalyze(ctx context.Context) error { return nil }

// RawSyncIDs reserves the ids up to the highest stored one, so the store's
// own paths see the ids raw writes used.
func (s *Store) RawSyncIDs(ctx context.Context) error {
	var top int64
	for _, c := range []*mongo.Collection{s.active, s.archive} {
		var d struct {
			ID int64 `bson:"_id"`
		}
		err := c.FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "_id", Value: -1}}).SetProjection(bson.D{{Key: "_id", Value: 1}})).Decode(&d)
		if err != nil && err != mongo.ErrNoDocuments {
			return err
		}
		top = max(top, d.ID)
	}
	last, err := s.lastID(ctx)
	if err != nil || top <= last {
		return err
	}
	_, err = s.takeIDs(ctx, s.recordIDs, top-last)
	return err
}
