package mongodb

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
	"github.com/crawlkeeper/crawlkeeper/internal/zstd"
)

// recordDoc is a record as stored in the active and archive collections.
// Times are Unix microseconds, as in the other backends, so records read
// back the same everywhere and compare as plain integers in indexes.
type recordDoc struct {
	ID       int64    `bson:"_id"`
	Key      string   `bson:"key"`
	KeyParts []string `bson:"key_parts"`
	Source   string   `bson:"source"`
	Title    string   `bson:"title"`
	// TitleFold is the title with ASCII letters lower-cased, what List's
	// case-insensitive search matches, as on the SQL backends.
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
	// SearchText is what the text index reads (see search.go).
	SearchText string `bson:"search_text"`
	// LastRound and LastTarget are the round and target of the record's
	// last delivery that carried them (crawlkeeper.Record.LastRound), for
	// the search filters. A document written before they existed has
	// neither field, which reads as none and matches no round filter, as
	// a record without rounds does on the other stores; no backfill is
	// needed.
	LastRound  string `bson:"last_round,omitempty"`
	LastTarget string `bson:"last_target,omitempty"`
	// Fetches are the record's delivery counts for the recrawl advisor
	// (crawlkeeper.FetchCounts); absent on documents written before they
	// were counted, until the next delivery.
	Fetches *fetchDoc `bson:"fetches,omitempty"`
	// Rev counts the writes to this document; conditional writes name it.
	Rev int64 `bson:"rev"`
	// Merging is the id of the rekey merge that holds the document (see
	// rekey.go); no other writer changes a document that carries it.
	Merging string `bson:"merging,omitempty"`

	// Archive only: the payload is compressed and ItemBytes is its size
	// before compression.
	ItemBytes     int64  `bson:"item_bytes,omitempty"`
	StoredBytes   int64  `bson:"stored_bytes,omitempty"`
	ArchivedAt    *int64 `bson:"archived_at,omitempty"`
	ArchiveReason string `bson:"archive_reason,omitempty"`
}

// toDoc returns the document of r; archived records get a compressed
// payload.
func toDoc(r *crawlkeeper.Record, rev int64) *recordDoc {
	d := &recordDoc{
		ID: r.ID, Key: r.Key, KeyParts: r.KeyParts, Source: r.Source, Title: r.Title, TitleFold: storeenc.LowerASCII(r.Title),
		URL: r.URL, Item: r.Item, ContentHash: r.ContentHash,
		CrawledAt: r.CrawledAt.UnixMicro(), LastUpdatedAt: r.LastUpdatedAt.UnixMicro(), LastChangedAt: r.LastChangedAt.UnixMicro(),
		Version: r.Version, EventAt: storeenc.Micros(r.EventAt), DateErrors: r.DateErrors, ProcessedAt: storeenc.Micros(r.ProcessedAt),
		ProcessedVersion: r.ProcessedVersion, ProcessedChain: r.ProcessedChain, Derived: storeenc.Blob(r.Derived), Rev: rev,
		SearchText: r.SearchText, LastRound: r.LastRound, LastTarget: r.LastTarget, Fetches: fetchesDoc(r.Fetches),
	}
	if d.KeyParts == nil {
		d.KeyParts = []string{}
	}
	if d.Item == nil {
		d.Item = []byte{}
	}
	if r.ArchivedAt != nil {
		d.Item = zstd.Compress(nil, r.Item)
		d.ItemBytes = int64(len(r.Item))
		d.StoredBytes = int64(len(d.Item))
		d.ArchivedAt = storeenc.Micros(r.ArchivedAt)
		d.ArchiveReason = string(r.ArchiveReason)
	}
	return d
}

// fetchDoc is crawlkeeper.FetchCounts in a document.
type fetchDoc struct {
	Refetches   int64   `bson:"refetches"`
	Changes     int64   `bson:"changes"`
	ChangedUS   int64   `bson:"changed_us"`
	UnchangedUS int64   `bson:"unchanged_us"`
	ChangedLog  float64 `bson:"changed_log"`
}

func fetchesDoc(f *crawlkeeper.FetchCounts) *fetchDoc {
	if f == nil {
		return nil
	}
	d := fetchDoc(*f)
	return &d
}

// record returns the record of d, decompressing an archived payload.
func (d *recordDoc) record() (*crawlkeeper.Record, error) {
	r := &crawlkeeper.Record{
		ID: d.ID, Key: d.Key, KeyParts: d.KeyParts, Source: d.Source, Title: d.Title, URL: d.URL, Item: d.Item,
		ContentHash: d.ContentHash, CrawledAt: crawlkeeper.MicrosTime(d.CrawledAt), LastUpdatedAt: crawlkeeper.MicrosTime(d.LastUpdatedAt),
		LastChangedAt: crawlkeeper.MicrosTime(d.LastChangedAt), Version: d.Version, EventAt: storeenc.Time(d.EventAt),
		ProcessedAt: storeenc.Time(d.ProcessedAt), ProcessedVersion: d.ProcessedVersion, ProcessedChain: d.ProcessedChain,
		SearchText: d.SearchText, LastRound: d.LastRound, LastTarget: d.LastTarget,
	}
	if r.KeyParts == nil {
		r.KeyParts = []string{}
	}
	if len(d.DateErrors) > 0 {
		r.DateErrors = d.DateErrors
	}
	if len(d.Derived) > 0 {
		r.Derived = d.Derived
	}
	if d.Fetches != nil {
		f := crawlkeeper.FetchCounts(*d.Fetches)
		r.Fetches = &f
	}
	if r.Item == nil {
		r.Item = []byte{}
	}
	if d.ArchivedAt != nil {
		raw, err := zstd.Decompress(nil, d.Item)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", d.ID, err)
		}
		r.Item = raw
		r.ArchivedAt = storeenc.Time(d.ArchivedAt)
		r.ArchiveReason = crawlkeeper.ArchiveReason(d.ArchiveReason)
	}
	return r, nil
}

// findDocs runs a find and decodes every document.
func findDocs(ctx context.Context, c *mongo.Collection, filter any, opts ...options.Lister[options.FindOptions]) ([]*recordDoc, error) {
	cur, err := c.Find(ctx, filter, opts...)
	if err != nil {
		return nil, err
	}
	var out []*recordDoc
	if err := cur.All(ctx, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// findRecords runs a find and returns the records.
func findRecords(ctx context.Context, c *mongo.Collection, filter any, opts ...options.Lister[options.FindOptions]) ([]*crawlkeeper.Record, error) {
	docs, err := findDocs(ctx, c, filter, opts...)
	if err != nil {
		return nil, err
	}
	out := make([]*crawlkeeper.Record, 0, len(docs))
	for _, d := range docs {
		r, err := d.record()
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func notFound(what string) error {
	return crawlkeeper.Errorf(crawlkeeper.ENOTFOUND, "%s not found", what)
}

// getOne reads a record by a filter from active, then archive: a record
// in both (a move in flight) is still the active one.
func (s *Store) getOne(ctx context.Context, filter bson.D, what string) (*crawlkeeper.Record, error) {
	for _, c := range []*mongo.Collection{s.active, s.archive} {
		var d recordDoc
		err := c.FindOne(ctx, filter).Decode(&d)
		if errors.Is(err, mongo.ErrNoDocuments) {
			continue
		}
		if err != nil {
			return nil, s.wrap("get "+what, err)
		}
		return d.record()
	}
	return nil, notFound(what)
}

// Get implements crawlkeeper.Store.
func (s *Store) Get(ctx context.Context, id int64) (*crawlkeeper.Record, error) {
	return s.getOne(ctx, bson.D{{Key: "_id", Value: id}}, fmt.Sprintf("record %d", id))
}

// GetByKey implements crawlkeeper.Store.
func (s *Store) GetByKey(ctx context.Context, key string) (*crawlkeeper.Record, error) {
	return s.getOne(ctx, bson.D{{Key: "key", Value: key}}, fmt.Sprintf("record with key %q", key))
}

// historyDoc is one kept previous version. Its _id is "record:version",
// so rewriting an entry is an upsert by _id.
type historyDoc struct {
	ID          string `bson:"_id"`
	RecordID    int64  `bson:"record_id"`
	Version     int64  `bson:"version"`
	Item        []byte `bson:"item"`
	ContentHash string `bson:"content_hash"`
	ValidFrom   int64  `bson:"valid_from"`
	ValidTo     int64  `bson:"valid_to"`
	// Merge is the id of the rekey merge that wrote the entry, if one
	// did: ingest never overwrites such an entry (see writeHistory).
	Merge string `bson:"merge,omitempty"`
}

func historyID(recordID, version int64) string { return fmt.Sprintf("%d:%d", recordID, version) }

// History implements crawlkeeper.Store. Entries at or above the record's
// version are left over from an ingest that stopped between writing the
// history and the record (see the package notes) and are not history.
func (s *Store) History(ctx context.Context, id int64) ([]crawlkeeper.HistoryEntry, error) {
	what := fmt.Sprintf("history of %d", id)
	r, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	cur, err := s.history.Find(ctx, bson.D{{Key: "record_id", Value: id}, {Key: "version", Value: bson.D{{Key: "$lt", Value: r.Version}}}},
		options.Find().SetSort(bson.D{{Key: "record_id", Value: 1}, {Key: "version", Value: 1}}))
	if err != nil {
		return nil, s.wrap(what, err)
	}
	var docs []historyDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, s.wrap(what, err)
	}
	out := make([]crawlkeeper.HistoryEntry, 0, len(docs))
	for _, h := range docs {
		item := h.Item
		if item == nil {
			item = []byte{}
		}
		out = append(out, crawlkeeper.HistoryEntry{RecordID: h.RecordID, Version: h.Version, Item: item, ContentHash: h.ContentHash,
			ValidFrom: crawlkeeper.MicrosTime(h.ValidFrom), ValidTo: crawlkeeper.MicrosTime(h.ValidTo)})
	}
	return out, nil
}

// HistoryMany implements crawlkeeper.RecordStore. As in History, entries
// at or above a record's version are left-overs, not history, so the
// records' versions are read first.
func (s *Store) HistoryMany(ctx context.Context, ids []int64) (map[int64][]crawlkeeper.HistoryEntry, error) {
	out := map[int64][]crawlkeeper.HistoryEntry{}
	if len(ids) == 0 {
		return out, nil
	}
	in := bson.D{{Key: "$in", Value: ids}}
	version := map[int64]int64{}
	for _, c := range []*mongo.Collection{s.active, s.archive} {
		docs, err := findDocs(ctx, c, bson.D{{Key: "_id", Value: in}}, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}, {Key: "version", Value: 1}}))
		if err != nil {
			return nil, s.wrap("history", err)
		}
		for _, d := range docs {
			version[d.ID] = d.Version
		}
	}
	cur, err := s.history.Find(ctx, bson.D{{Key: "record_id", Value: in}},
		options.Find().SetSort(bson.D{{Key: "record_id", Value: 1}, {Key: "version", Value: 1}}))
	if err != nil {
		return nil, s.wrap("history", err)
	}
	var docs []historyDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, s.wrap("history", err)
	}
	for _, h := range docs {
		if v, ok := version[h.RecordID]; !ok || h.Version >= v {
			continue
		}
		item := h.Item
		if item == nil {
			item = []byte{}
		}
		out[h.RecordID] = append(out[h.RecordID], crawlkeeper.HistoryEntry{RecordID: h.RecordID, Version: h.Version, Item: item, ContentHash: h.ContentHash,
			ValidFrom: crawlkeeper.MicrosTime(h.ValidFrom), ValidTo: crawlkeeper.MicrosTime(h.ValidTo)})
	}
	return out, nil
}

// List implements crawlkeeper.Store with keyset pagination on (_id) or
// (last_updated_at, _id), both indexed.
func (s *Store) List(ctx context.Context, q crawlkeeper.RecordQuery) (*crawlkeeper.RecordPage, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	if limit > 10000 {
		limit = 10000
	}
	c := s.active
	if q.Archived {
		c = s.archive
	}
	filter := bson.D{}
	if q.FiltersSource() {
		filter = append(filter, bson.E{Key: "source", Value: q.Source})
	}
	if q.Q != "" {
		filter = append(filter, bson.E{Key: "title_fold", Value: bson.D{{Key: "$regex", Value: regexp.QuoteMeta(storeenc.LowerASCII(q.Q))}}})
	}
	if q.Round != "" {
		filter = append(filter, bson.E{Key: "last_round", Value: q.Round})
	}
	if q.Target != "" {
		filter = append(filter, bson.E{Key: "last_target", Value: q.Target})
	}
	if !q.Since.IsZero() {
		filter = append(filter, bson.E{Key: "last_updated_at", Value: bson.D{{Key: "$gte", Value: q.Since.UnixMicro()}}})
	}
	cur, err := crawlkeeper.DecodeCursor(q.Cursor, q.Order)
	if err != nil {
		return nil, err
	}
	sort := bson.D{{Key: "_id", Value: 1}}
	if q.Order == crawlkeeper.OrderNewest {
		sort = bson.D{{Key: "last_updated_at", Value: -1}, {Key: "_id", Value: -1}}
		if cur != nil {
			filter = append(filter, bson.E{Key: "$or", Value: bson.A{
				bson.D{{Key: "last_updated_at", Value: bson.D{{Key: "$lt", Value: cur.UpdatedMicros}}}},
				bson.D{{Key: "last_updated_at", Value: cur.UpdatedMicros}, {Key: "_id", Value: bson.D{{Key: "$lt", Value: cur.ID}}}},
			}})
		}
	} else if cur != nil {
		filter = append(filter, bson.E{Key: "_id", Value: bson.D{{Key: "$gt", Value: cur.ID}}})
	}
	recs, err := findRecords(ctx, c, filter, options.Find().SetSort(sort).SetLimit(int64(limit+1)))
	if err != nil {
		return nil, s.wrap("list records", err)
	}
	page := &crawlkeeper.RecordPage{Records: recs}
	if len(page.Records) > limit {
		page.Records = page.Records[:limit]
		page.Next = crawlkeeper.EncodeCursor(page.Records[limit-1], q.Order)
	}
	if q.Archived && len(page.Records) > 0 {
		// A record whose move between the collections was interrupted
		// is in both until the repair; reads resolve it to its active
		// copy, so the archive listing leaves it out.
		if page.Records, err = s.withoutActive(ctx, page.Records); err != nil {
			return nil, s.wrap("list records", err)
		}
	}
	return page, nil
}

// withoutActive returns recs without those that also have an active copy.
func (s *Store) withoutActive(ctx context.Context, recs []*crawlkeeper.Record) ([]*crawlkeeper.Record, error) {
	ids := make([]int64, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	docs, err := findDocs(ctx, s.active, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}},
		options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil || len(docs) == 0 {
		return recs, err
	}
	active := make(map[int64]bool, len(docs))
	for _, d := range docs {
		active[d.ID] = true
	}
	out := recs[:0]
	for _, r := range recs {
		if !active[r.ID] {
			out = append(out, r)
		}
	}
	return out, nil
}
