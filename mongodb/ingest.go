package mongodb

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
)

// takeIDs reserves n consecutive numbers of the sequence kept in c and
// returns the first. Each reservation is a document {_id: first, last}
// inserted right after the highest one: the unique _id makes two
// processes that read the same highest reservation collide, and the loser
// reads again. An atomic $inc on one counter document would do on
// MongoDB, but FerretDB 1.24 applies findAndModify and update as a read
// followed by a write of the whole document, so concurrent increments
// get lost there; a unique insert is atomic on both.
func (s *Store) takeIDs(ctx context.Context, c *mongo.Collection, n int64) (int64, error) {
	for attempt := 0; attempt < 100; attempt++ {
		last, err := lastOf(ctx, c)
		if err != nil {
			return 0, err
		}
		now := time.Now()
		_, err = c.InsertOne(ctx, bson.D{{Key: "_id", Value: last + 1}, {Key: "last", Value: last + n}, {Key: "at", Value: now.UnixMicro()}})
		if mongo.IsDuplicateKeyError(err) {
			continue
		}
		if err != nil {
			return 0, err
		}
		// Older reservations only matter to a process that read the
		// highest one before they were made; after a while none is left,
		// and they go, now and then, so the collection stays small.
		if rand.IntN(16) == 0 {
			c.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: last + 1}}},
				{Key: "at", Value: bson.D{{Key: "$lt", Value: now.Add(-10 * time.Minute).UnixMicro()}}}})
		}
		return last + 1, nil
	}
	return 0, errConflict
}

// lastOf returns the last number reserved in the sequence c, 0 when none.
func lastOf(ctx context.Context, c *mongo.Collection) (int64, error) {
	var d struct {
		Last int64 `bson:"last"`
	}
	err := c.FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "_id", Value: -1}})).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, nil
	}
	return d.Last, err
}

// lastID returns the last record id handed out, 0 when none.
func (s *Store) lastID(ctx context.Context) (int64, error) { return lastOf(ctx, s.recordIDs) }

// Ingest implements crawlkeeper.Store. The records of the batch's keys
// are read (active, then archive), the domain's Merge decides each item
// (crawlkeeper.PlanIngest), and the writes go
// out as bulk writes, each document write conditioned on the rev that was
// read. When one matches nothing, a concurrent writer changed the record
// and Ingest returns ECONFLICT; the writes already made are those of an
// idempotent batch, so running the batch again converges.
//
// A record held by a rekey merge (rekey.go), met before any record is
// written, is settled — its merge rolled forward, or back when its process
// is presumed dead — and the batch read again; while the merge's process
// is still planning it, Ingest returns ECONFLICT.
func (s *Store) Ingest(ctx context.Context, b *crawlkeeper.IngestBatch) (*crawlkeeper.IngestResult, error) {
	if len(b.Items) == 0 {
		return &crawlkeeper.IngestResult{Outcomes: []crawlkeeper.Outcome{}, IDs: []int64{}}, nil
	}
	for attempt := 1; ; attempt++ {
		res, err := s.ingest(ctx, b)
		if errors.Is(err, errSettled) && attempt < 4 {
			continue
		}
		if err != nil {
			return nil, s.wrap("ingest", err)
		}
		return res, nil
	}
}

// errSettled is returned by ingest when it met records held by a rekey
// merge and settled the merge before writing anything: reading again may
// find them free.
var errSettled = fmt.Errorf("%w: a rekey merge held a record", errConflict)

func (s *Store) ingest(ctx context.Context, b *crawlkeeper.IngestBatch) (*crawlkeeper.IngestResult, error) {
	keys := crawlkeeper.DistinctKeys(b.Items)
	state := make(map[string]*crawlkeeper.Record, len(keys))
	rev := map[int64]int64{} // id → rev read, of the copy ingest works on
	var marks []markRef
	// Active first: a move to archive copies before it deletes, so a key
	// not seen in active is seen in archive (or ingest hits the unique
	// index on active.key when it was being moved the other way).
	for i, c := range []*mongo.Collection{s.active, s.archive} {
		docs, err := findDocs(ctx, c, bson.D{{Key: "key", Value: bson.D{{Key: "$in", Value: keys}}}})
		if err != nil {
			return nil, fmt.Errorf("look up keys: %w", err)
		}
		for _, d := range docs {
			if d.Merging != "" {
				marks = append(marks, markRef{archived: i == 1, id: d.ID, intent: d.Merging})
			}
			if state[d.Key] != nil {
				continue // in both: a move in flight, the active copy counts
			}
			r, err := d.record()
			if err != nil {
				return nil, err
			}
			state[d.Key], rev[d.ID] = r, d.Rev
		}
	}
	if len(marks) > 0 {
		return nil, s.settled(s.settleMarks(ctx, marks))
	}
	var ids []int64
	if n := crawlkeeper.NewKeyCount(b.Items, state); n > 0 {
		first, err := s.takeIDs(ctx, s.recordIDs, int64(n))
		if err != nil {
			return nil, fmt.Errorf("take ids: %w", err)
		}
		for i := 0; i < n; i++ {
			ids = append(ids, first+int64(i))
		}
	}
	w, res := crawlkeeper.PlanIngest(b, state, ids)
	if err := s.step("ingest:planned"); err != nil {
		return nil, err
	}

	// History of existing records goes first: a crash before the record is
	// written leaves entries at the record's own version, which reads
	// ignore. History of records new in this batch (a key delivered twice
	// in it) goes after their insert: written first, it would outlive an
	// insert that failed (a concurrent insert of the key won) as the
	// history of an id that never existed. A crash in between loses only
	// versions of an unacknowledged batch, which its redelivery rewrites.
	isNew := make(map[int64]bool, len(ids))
	for _, id := range ids {
		isNew[id] = true
	}
	var oldHist, newHist []*crawlkeeper.HistoryEntry
	for _, h := range w.History {
		if isNew[h.RecordID] {
			newHist = append(newHist, h)
		} else {
			oldHist = append(oldHist, h)
		}
	}
	if err := s.writeHistory(ctx, oldHist); err != nil {
		return nil, err
	}

	revived := make(map[int64]bool, len(w.DeleteArchive))
	for _, id := range w.DeleteArchive {
		revived[id] = true
	}
	var inserts []any
	var revive []*crawlkeeper.Record
	for _, r := range w.InsertActive {
		if revived[r.ID] {
			revive = append(revive, r)
			continue
		}
		inserts = append(inserts, toDoc(r, 1))
	}
	if len(inserts) > 0 {
		if err := s.claimKeys(ctx, inserts); err != nil {
			return nil, err
		}
		// Unordered: the documents are independent, and a duplicate key
		// (a concurrent insert of the same key) must not stop the others.
		if _, err := s.active.InsertMany(ctx, inserts, options.InsertMany().SetOrdered(false)); err != nil {
			return nil, fmt.Errorf("insert records: %w", err)
		}
	}
	if len(revive) > 0 {
		old := make(map[int64]int64, len(revive))
		for _, r := range revive {
			old[r.ID] = rev[r.ID]
		}
		done, err := s.moveToActive(ctx, revive, old)
		if err != nil {
			return nil, fmt.Errorf("revive: %w", err)
		}
		if len(done) != len(revive) {
			// Locked by a move or a merge: settle a merge's, and let the
			// caller retry (the batch's inserts are written already).
			ids := make([]int64, len(revive))
			for i, r := range revive {
				ids[i] = r.ID
			}
			if _, err := s.settleRecords(ctx, ids); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("revive: %w", errConflict)
		}
	}
	if err := s.writeHistory(ctx, newHist); err != nil {
		return nil, err
	}
	if err := s.updateRecords(ctx, s.active, w.UpdateActive, w.TouchActive, rev); err != nil {
		return nil, fmt.Errorf("update records: %w", err)
	}
	if err := s.updateRecords(ctx, s.archive, w.UpdateArchive, w.TouchArchive, rev); err != nil {
		return nil, fmt.Errorf("update archived records: %w", err)
	}
	if len(w.TrimHistory) > 0 {
		models := make([]mongo.WriteModel, 0, len(w.TrimHistory))
		for _, t := range w.TrimHistory {
			models = append(models, mongo.NewDeleteManyModel().SetFilter(bson.D{{Key: "record_id", Value: t.RecordID},
				{Key: "version", Value: bson.D{{Key: "$lte", Value: t.UpTo}}}}))
		}
		if _, err := s.history.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false)); err != nil {
			return nil, fmt.Errorf("trim history: %w", err)
		}
	}
	if err := s.countDeliveries(ctx, w.Deliveries); err != nil {
		return nil, err
	}
	return res, nil
}

// writeHistory writes history entries. An entry's _id is its record and
// version, so an entry written again (by a batch run again, or left by an
// ingest that stopped before writing its record) is replaced — unless a
// rekey merge wrote it: its version is below the record's, so only an
// ingest that read the record before the merge can reach it, and that
// ingest gets a conflict instead. New entries are inserted and only the
// few that collide are replaced, conditionally: an upsert whose filter
// names more than _id reads the whole collection on FerretDB.
func (s *Store) writeHistory(ctx context.Context, hist []*crawlkeeper.HistoryEntry) error {
	if len(hist) == 0 {
		return nil
	}
	docs := make([]any, len(hist))
	for i, h := range hist {
		docs[i] = &historyDoc{ID: historyID(h.RecordID, h.Version), RecordID: h.RecordID, Version: h.Version, Item: h.Item,
			ContentHash: h.ContentHash, ValidFrom: h.ValidFrom.UnixMicro(), ValidTo: h.ValidTo.UnixMicro()}
	}
	_, err := s.history.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	if err == nil {
		return nil
	}
	dup, ok := duplicateIndexes(err)
	if !ok {
		return fmt.Errorf("write history: %w", err)
	}
	conflict := false
	for i := range docs {
		if !dup[i] {
			continue
		}
		d := docs[i].(*historyDoc)
		res, err := s.history.ReplaceOne(ctx, bson.D{{Key: "_id", Value: d.ID}, {Key: "merge", Value: bson.D{{Key: "$exists", Value: false}}}}, d)
		if err != nil {
			return fmt.Errorf("write history: %w", err)
		}
		conflict = conflict || res.MatchedCount == 0
	}
	if conflict {
		return fmt.Errorf("write history: %w", errConflict)
	}
	return nil
}

// countDeliveries adds a batch's deliveries to the per-source counters in
// the deliveries collection. Without transactions they are added after
// the batch's records are written: a crash in between loses that batch's
// count (never the records), and a batch run again after an error is
// counted again.
func (s *Store) countDeliveries(ctx context.Context, ds []crawlkeeper.DeliveryCount) error {
	if len(ds) == 0 {
		return nil
	}
	models := make([]mongo.WriteModel, len(ds))
	for i, d := range ds {
		models[i] = mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: d.Source}}).
			SetUpdate(bson.D{{Key: "$inc", Value: bson.D{{Key: "deliveries", Value: d.Deliveries}, {Key: "duplicates", Value: d.Duplicates}}}}).SetUpsert(true)
	}
	if _, err := s.deliveries.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false)); err != nil {
		return fmt.Errorf("count deliveries: %w", err)
	}
	return nil
}

// updateRecords writes changed and touched records into c, each only if
// its rev is still the one read; a write that matches nothing means a
// concurrent change, reported as errConflict after the others applied.
func (s *Store) updateRecords(ctx context.Context, c *mongo.Collection, changed, touched []*crawlkeeper.Record, rev map[int64]int64) error {
	if len(changed)+len(touched) == 0 {
		return nil
	}
	models := make([]mongo.WriteModel, 0, len(changed)+len(touched))
	for _, r := range changed {
		d := toDoc(r, 0)
		set := bson.D{{Key: "key_parts", Value: d.KeyParts}, {Key: "title", Value: d.Title}, {Key: "title_fold", Value: d.TitleFold},
			{Key: "url", Value: d.URL}, {Key: "item", Value: d.Item}, {Key: "content_hash", Value: d.ContentHash},
			{Key: "last_updated_at", Value: d.LastUpdatedAt}, {Key: "last_changed_at", Value: d.LastChangedAt}, {Key: "version", Value: d.Version},
			{Key: "event_at", Value: d.EventAt}, {Key: "date_errors", Value: d.DateErrors}, {Key: "search_text", Value: d.SearchText},
			{Key: "last_round", Value: d.LastRound}, {Key: "last_target", Value: d.LastTarget}, {Key: "fetches", Value: d.Fetches}}
		if r.Archived() {
			set = append(set, bson.E{Key: "item_bytes", Value: d.ItemBytes}, bson.E{Key: "stored_bytes", Value: d.StoredBytes})
		}
		models = append(models, condUpdate(r.ID, rev[r.ID], set))
	}
	for _, r := range touched {
		set := bson.D{{Key: "last_updated_at", Value: r.LastUpdatedAt.UnixMicro()}, {Key: "event_at", Value: storeenc.Micros(r.EventAt)},
			{Key: "date_errors", Value: r.DateErrors}, {Key: "last_round", Value: r.LastRound}, {Key: "last_target", Value: r.LastTarget},
			{Key: "fetches", Value: fetchesDoc(r.Fetches)}}
		models = append(models, condUpdate(r.ID, rev[r.ID], set))
	}
	res, err := bulkChunks(ctx, c, models)
	if err != nil {
		return err
	}
	conflict := res.MatchedCount != int64(len(models))
	if conflict {
		return errConflict
	}
	return nil
}

// condUpdate sets fields of the document id only if its rev is still rev
// and no rekey merge holds it, and counts the write in rev.
func condUpdate(id, rev int64, set bson.D) *mongo.UpdateOneModel {
	return mongo.NewUpdateOneModel().
		SetFilter(bson.D{{Key: "_id", Value: id}, {Key: "rev", Value: rev}, unmarked}).
		SetUpdate(bson.D{{Key: "$set", Value: set}, {Key: "$inc", Value: bson.D{{Key: "rev", Value: 1}}}})
}

// claimKeys registers the keys of new records in the keys collection,
// whose unique _id is the key. Reading active and archive and then
// inserting cannot see a record that a restore and a new archive move
// carry past both reads; the claim can, because every record's key stays
// claimed until the record is purged. A key claimed by a record that no
// longer exists (a crash between claim and insert, or a purge that
// stopped before releasing it) is released, and the batch is retried. A
// key claimed by a record that a rekey holds (a merge's survivor, or a
// record being given the key) settles the rekey first.
func (s *Store) claimKeys(ctx context.Context, docs []any) error {
	claims := make([]any, len(docs))
	for i, d := range docs {
		r := d.(*recordDoc)
		claims[i] = bson.D{{Key: "_id", Value: r.Key}, {Key: "id", Value: r.ID}}
	}
	_, err := s.keys.InsertMany(ctx, claims, options.InsertMany().SetOrdered(false))
	if err == nil {
		return nil
	}
	dup, ok := duplicateIndexes(err)
	if !ok {
		return fmt.Errorf("claim keys: %w", err)
	}
	var holders []int64
	released := false
	for i, d := range docs {
		r := d.(*recordDoc)
		if !dup[i] {
			// Ours: released, so that the retry claims it again.
			if _, err := s.keys.DeleteOne(ctx, bson.D{{Key: "_id", Value: r.Key}, {Key: "id", Value: r.ID}}); err != nil {
				return fmt.Errorf("release keys: %w", err)
			}
			continue
		}
		var k struct {
			ID    int64  `bson:"id"`
			Rekey string `bson:"rekey"`
			From  int64  `bson:"from"`
		}
		if err := s.keys.FindOne(ctx, bson.D{{Key: "_id", Value: r.Key}}).Decode(&k); err != nil {
			if errors.Is(err, mongo.ErrNoDocuments) {
				continue
			}
			return fmt.Errorf("read key claim: %w", err)
		}
		if k.Rekey != "" {
			// A merge's claim: settled with the merge, or left over.
			c := &claimDoc{Key: r.Key, ID: k.ID, Rekey: k.Rekey, From: k.From}
			left, err := s.releaseLeftClaim(ctx, c)
			if err != nil {
				return fmt.Errorf("read key claim: %w", err)
			}
			released = released || left
			holders = append(holders, k.ID)
			continue
		}
		exists := false
		for _, c := range []*mongo.Collection{s.active, s.archive} {
			n, err := c.CountDocuments(ctx, bson.D{{Key: "_id", Value: k.ID}})
			if err != nil {
				return fmt.Errorf("read key claim: %w", err)
			}
			exists = exists || n > 0
		}
		if !exists {
			if _, err := s.keys.DeleteOne(ctx, bson.D{{Key: "_id", Value: r.Key}, {Key: "id", Value: k.ID}}); err != nil {
				return fmt.Errorf("release a stale key claim: %w", err)
			}
			continue
		}
		holders = append(holders, k.ID)
	}
	if len(holders) > 0 {
		// Held by records that exist: inserted meanwhile (read again), or
		// held by a rekey, which is settled if it can be.
		progressed, err := s.settleRecords(ctx, holders)
		if err != nil {
			return err
		}
		if progressed || released {
			return errSettled
		}
	}
	return errConflict
}

// settled turns the outcome of settling rekey intents that held records
// into ingest's error: errSettled when something changed (read again),
// errConflict when not (the rekey is still planning; retry later).
func (s *Store) settled(progressed bool, err error) error {
	switch {
	case err != nil:
		return err
	case progressed:
		return errSettled
	}
	return fmt.Errorf("%w: a rekey run holds a record of the batch", errConflict)
}

// bulkChunk is the number of statements sent in one write command.
// MongoDB takes a thousand in one command; FerretDB 1.24 slows down
// sharply (minutes for a few hundred conditional updates in one command,
// milliseconds each one by one), and small commands cost MongoDB little.
const bulkChunk = 16

// bulkChunks runs models as unordered bulk writes of bulkChunk statements
// and adds up their results.
func bulkChunks(ctx context.Context, c *mongo.Collection, models []mongo.WriteModel) (*mongo.BulkWriteResult, error) {
	total := &mongo.BulkWriteResult{}
	for len(models) > 0 {
		n := min(len(models), bulkChunk)
		res, err := c.BulkWrite(ctx, models[:n], options.BulkWrite().SetOrdered(false))
		if res != nil {
			total.MatchedCount += res.MatchedCount
			total.ModifiedCount += res.ModifiedCount
			total.UpsertedCount += res.UpsertedCount
			total.InsertedCount += res.InsertedCount
			total.DeletedCount += res.DeletedCount
		}
		if err != nil {
			return total, err
		}
		models = models[n:]
	}
	return total, nil
}
