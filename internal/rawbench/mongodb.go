package rawbench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/rawbench/rawsql"
	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
	"github.com/crawlkeeper/crawlkeeper/internal/zstd"
)

// mongoRaw writes the store's documents with the driver's bulk calls.
type mongoRaw struct {
	active, archive, history, recordIDs *mongo.Collection
}

func newMongoRaw(db *mongo.Database) *mongoRaw {
	return &mongoRaw{active: db.Collection("active"), archive: db.Collection("archive"), history: db.Collection("history"), recordIDs: db.Collection("record_ids")}
}

// mongoBulk is the number of statements of one update command, the
// store's own (FerretDB slows down sharply on large update commands).
const mongoBulk = 16

// mongoInserts is the number of documents of one insert command: FerretDB
// drops the connection on an InsertMany of a thousand generated records.
const mongoInserts = 100

// insertMany inserts docs unordered, mongoInserts at a time.
func insertMany(ctx context.Context, c *mongo.Collection, docs []any) error {
	return batches(docs, mongoInserts, func(part []any) error {
		_, err := c.InsertMany(ctx, part, options.InsertMany().SetOrdered(false))
		return err
	})
}

// mongoDoc is the store's record document.
type mongoDoc struct {
	ID               int64    `bson:"_id"`
	Key              string   `bson:"key"`
	KeyParts         []string `bson:"key_parts"`
	Source           string   `bson:"source"`
	Title            string   `bson:"title"`
	TitleFold        string   `bson:"title_fold"`
	URL              string   `bson:"url"`
	Item             []byte   `bson:"item"`
	ContentHash      string   `bson:"content_hash"`
	CrawledAt        int64    `bson:"crawled_at"`
	LastUpdatedAt    int64    `bson:"last_updated_at"`
	LastChangedAt    int64    `bson:"last_changed_at"`
	Version          int64    `bson:"version"`
	EventAt          *int64   `bson:"event_at"`
	DateErrors       []string `bson:"date_errors,omitempty"`
	ProcessedAt      *int64   `bson:"processed_at"`
	ProcessedVersion int64    `bson:"processed_version"`
	ProcessedChain   string   `bson:"processed_chain"`
	Derived          []byte   `bson:"derived,omitempty"`
	SearchText       string   `bson:"search_text"`
	Rev              int64    `bson:"rev"`
	ItemBytes        int64    `bson:"item_bytes,omitempty"`
	StoredBytes      int64    `bson:"stored_bytes,omitempty"`
	ArchivedAt       *int64   `bson:"archived_at,omitempty"`
	ArchiveReason    string   `bson:"archive_reason,omitempty"`
}

func newMongoDoc(r *crawlkeeper.Record) *mongoDoc {
	d := &mongoDoc{ID: r.ID, Key: r.Key, KeyParts: r.KeyParts, Source: r.Source, Title: r.Title, TitleFold: storeenc.LowerASCII(r.Title),
		URL: r.URL, Item: r.Item, ContentHash: r.ContentHash, CrawledAt: r.CrawledAt.UnixMicro(), LastUpdatedAt: r.LastUpdatedAt.UnixMicro(),
		LastChangedAt: r.LastChangedAt.UnixMicro(), Version: r.Version, EventAt: storeenc.Micros(r.EventAt), DateErrors: r.DateErrors,
		ProcessedAt: storeenc.Micros(r.ProcessedAt), ProcessedVersion: r.ProcessedVersion, ProcessedChain: r.ProcessedChain,
		Derived: storeenc.Blob(r.Derived), SearchText: r.SearchText, Rev: 1}
	if d.KeyParts == nil {
		d.KeyParts = []string{}
	}
	if d.Item == nil {
		d.Item = []byte{}
	}
	return d
}

// Insert writes recs with unordered InsertMany commands.
func (s *mongoRaw) Insert(ctx context.Context, recs []*crawlkeeper.Record) error {
	if len(recs) == 0 {
		return nil
	}
	docs := make([]any, len(recs))
	for i, r := range recs {
		docs[i] = newMongoDoc(r)
	}
	return insertMany(ctx, s.active, docs)
}

// Touch sets last_updated_at of the documents of keys with one UpdateMany.
func (s *mongoRaw) Touch(ctx context.Context, keys []string, now time.Time) error {
	_, err := s.active.UpdateMany(ctx, bson.D{{Key: "key", Value: bson.D{{Key: "$in", Value: keys}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "last_updated_at", Value: now.UnixMicro()}}}})
	return err
}

// Change inserts hist and updates each document's content by _id, in
// unordered bulk writes.
func (s *mongoRaw) Change(ctx context.Context, recs []*crawlkeeper.Record, hist []*crawlkeeper.HistoryEntry) error {
	if len(hist) > 0 {
		docs := make([]any, len(hist))
		for i, h := range hist {
			docs[i] = bson.D{{Key: "_id", Value: fmt.Sprintf("%d:%d", h.RecordID, h.Version)}, {Key: "record_id", Value: h.RecordID},
				{Key: "version", Value: h.Version}, {Key: "item", Value: []byte(h.Item)}, {Key: "content_hash", Value: h.ContentHash},
				{Key: "valid_from", Value: h.ValidFrom.UnixMicro()}, {Key: "valid_to", Value: h.ValidTo.UnixMicro()}}
		}
		if err := insertMany(ctx, s.history, docs); err != nil && !onlyDuplicates(err) {
			return err
		}
	}
	models := make([]mongo.WriteModel, len(recs))
	for i, r := range recs {
		models[i] = mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: r.ID}}).SetUpdate(bson.D{{Key: "$set", Value: bson.D{
			{Key: "title", Value: r.Title}, {Key: "title_fold", Value: storeenc.LowerASCII(r.Title)}, {Key: "url", Value: r.URL},
			{Key: "item", Value: []byte(r.Item)}, {Key: "content_hash", Value: r.ContentHash}, {Key: "last_updated_at", Value: r.LastUpdatedAt.UnixMicro()},
			{Key: "last_changed_at", Value: r.LastChangedAt.UnixMicro()}, {Key: "version", Value: r.Version}, {Key: "event_at", Value: storeenc.Micros(r.EventAt)},
			{Key: "search_text", Value: r.SearchText}}}, {Key: "$inc", Value: bson.D{{Key: "rev", Value: 1}}}})
	}
	return batches(models, mongoBulk, func(c []mongo.WriteModel) error {
		_, err := s.active.BulkWrite(ctx, c, options.BulkWrite().SetOrdered(false))
		return err
	})
}

// onlyDuplicates says whether every error of a bulk write is a duplicate
// key: an entry already there, the ON CONFLICT DO NOTHING of SQL.
func onlyDuplicates(err error) bool {
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || bwe.WriteConcernError != nil {
		return false
	}
	for _, e := range bwe.WriteErrors {
		if e.Code != 11000 {
			return false
		}
	}
	return true
}

// SelectAge reads what an age rule selects in the index's order;
// unindexed, the query is hinted to a collection scan ($natural).
func (s *mongoRaw) SelectAge(ctx context.Context, cutoff time.Time, indexed bool) (int, error) {
	opts := options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}, {Key: "version", Value: 1}, {Key: "last_updated_at", Value: 1}, {Key: "crawled_at", Value: 1}}).
		SetSort(bson.D{{Key: "crawled_at", Value: 1}, {Key: "_id", Value: 1}})
	if !indexed {
		opts.SetHint(bson.D{{Key: "$natural", Value: 1}})
	}
	cur, err := s.active.Find(ctx, bson.D{{Key: "crawled_at", Value: bson.D{{Key: "$lte", Value: cutoff.UnixMicro()}}}}, opts)
	return mongoCount(ctx, cur, err)
}

func mongoCount(ctx context.Context, cur *mongo.Cursor, err error) (int, error) {
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

// Move copies documents to the archive and deletes them from active,
// without intents, conditions or compression.
func (s *mongoRaw) Move(ctx context.Context, ids []int64, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	in := bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}
	cur, err := s.active.Find(ctx, in)
	if err != nil {
		return err
	}
	var docs []*mongoDoc
	if err := cur.All(ctx, &docs); err != nil {
		return err
	}
	at := now.UnixMicro()
	out := make([]any, len(docs))
	for i, d := range docs {
		d.ArchivedAt, d.ArchiveReason, d.ItemBytes, d.StoredBytes = &at, string(crawlkeeper.ReasonAge), int64(len(d.Item)), int64(len(d.Item))
		out[i] = d
	}
	if len(out) > 0 {
		if err := insertMany(ctx, s.archive, out); err != nil {
			return err
		}
	}
	_, err = s.active.DeleteMany(ctx, in)
	return err
}

// Keyset reads one keyset page of active documents in _id order, every
// field.
func (s *mongoRaw) Keyset(ctx context.Context, afterID int64, limit int) (int, int64, error) {
	cur, err := s.active.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: afterID}}}},
		options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(limit)))
	if err != nil {
		return 0, 0, err
	}
	defer cur.Close(ctx)
	n, last := 0, afterID
	for cur.Next(ctx) {
		var d mongoDoc
		if err := cur.Decode(&d); err != nil {
			return n, last, err
		}
		last = d.ID
		n++
	}
	return n, last, cur.Err()
}

// ProcessPage reads a keyset page and writes a result for each of its
// documents with one unordered bulk write of updates conditioned on the
// version read.
func (s *mongoRaw) ProcessPage(ctx context.Context, afterID int64, limit int, at time.Time) (int, int64, error) {
	cur, err := s.active.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: afterID}}}},
		options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(limit)))
	if err != nil {
		return 0, afterID, err
	}
	var docs []mongoDoc
	if err := cur.All(ctx, &docs); err != nil || len(docs) == 0 {
		return 0, afterID, err
	}
	models := make([]mongo.WriteModel, len(docs))
	for i, d := range docs {
		models[i] = mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: d.ID}, {Key: "version", Value: d.Version}}).
			SetUpdate(bson.D{{Key: "$set", Value: bson.D{{Key: "processed_at", Value: at.UnixMicro()}, {Key: "processed_version", Value: d.Version},
				{Key: "processed_chain", Value: "raw"}, {Key: "derived", Value: rawsql.Derived(d.ID, at.UnixMicro())}}}})
	}
	if _, err := s.active.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false)); err != nil {
		return 0, afterID, err
	}
	return len(docs), docs[len(docs)-1].ID, nil
}

// Newest reads the limit most recently updated active documents.
func (s *mongoRaw) Newest(ctx context.Context, limit int) (int, error) {
	cur, err := s.active.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "last_updated_at", Value: -1}}).SetLimit(int64(limit)))
	if err != nil {
		return 0, err
	}
	var docs []mongoDoc
	err = cur.All(ctx, &docs)
	return len(docs), err
}

// ArchiveInsert writes recs straight into the archive, compressed as the
// store keeps archived payloads.
func (s *mongoRaw) ArchiveInsert(ctx context.Context, recs []*crawlkeeper.Record, at time.Time) error {
	if len(recs) == 0 {
		return nil
	}
	us := at.UnixMicro()
	docs := make([]any, len(recs))
	for i, r := range recs {
		d := newMongoDoc(r)
		d.Item = zstd.Compress(nil, r.Item)
		d.ItemBytes, d.StoredBytes, d.ArchivedAt, d.ArchiveReason = int64(len(r.Item)), int64(len(d.Item)), &us, string(crawlkeeper.ReasonAge)
		docs[i] = d
	}
	return insertMany(ctx, s.archive, docs)
}

// Search is the query an application would write by hand against the
// text index (each word, or the phrase, quoted, which $text requires all
// of), best textScore first, whole documents.
func (s *mongoRaw) Search(ctx context.Context, words []string, phrase bool, source string, limit int) (int, error) {
	search := `"` + strings.Join(words, `" "`) + `"`
	if phrase {
		search = `"` + strings.Join(words, " ") + `"`
	}
	filter := bson.D{{Key: "$text", Value: bson.D{{Key: "$search", Value: search}, {Key: "$language", Value: "none"}}}}
	if source != "" {
		filter = append(filter, bson.E{Key: "source", Value: source})
	}
	score := bson.D{{Key: "score", Value: bson.D{{Key: "$meta", Value: "textScore"}}}}
	cur, err := s.active.Find(ctx, filter, options.Find().SetProjection(score).SetSort(score).SetLimit(int64(limit)))
	return mongoCount(ctx, cur, err)
}

// SyncIDs reserves the ids up to the highest stored one, as the store
// reserves ids (a record_ids document naming the last id taken), so the
// store's own paths see the ids raw writes used.
func (s *mongoRaw) SyncIDs(ctx context.Context) error {
	var top int64
	for _, c := range []*mongo.Collection{s.active, s.archive} {
		var d struct {
			ID int64 `bson:"_id"`
		}
		err := c.FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "_id", Value: -1}}).SetProjection(bson.D{{Key: "_id", Value: 1}})).Decode(&d)
		if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
			return err
		}
		top = max(top, d.ID)
	}
	var r struct {
		Last int64 `bson:"last"`
	}
	err := s.recordIDs.FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "_id", Value: -1}})).Decode(&r)
	if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
		return err
	}
	if top <= r.Last {
		return nil
	}
	_, err = s.recordIDs.InsertOne(ctx, bson.D{{Key: "_id", Value: r.Last + 1}, {Key: "last", Value: top}, {Key: "at", Value: time.Now().UnixMicro()}})
	return err
}

// Analyze does nothing: MongoDB's planner keeps no statistics to refresh
// after a bulk load.
func (s *mongoRaw) Analyze(ctx context.Context) error { return nil }
