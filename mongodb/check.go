package mongodb

import (
	"context"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
)

// summaryDoc is the part of a record that Stats and Check read.
type summaryDoc struct {
	ID            int64    `bson:"_id"`
	Key           string   `bson:"key"`
	Source        string   `bson:"source"`
	Version       int64    `bson:"version"`
	CrawledAt     int64    `bson:"crawled_at"`
	LastUpdatedAt int64    `bson:"last_updated_at"`
	DateErrors    []string `bson:"date_errors"`
	ArchiveReason string   `bson:"archive_reason"`
	ItemBytes     int64    `bson:"item_bytes"`
	StoredBytes   int64    `bson:"stored_bytes"`
}

var summaryProjection = bson.D{{Key: "key", Value: 1}, {Key: "source", Value: 1}, {Key: "version", Value: 1}, {Key: "crawled_at", Value: 1},
	{Key: "last_updated_at", Value: 1}, {Key: "date_errors", Value: 1}, {Key: "archive_reason", Value: 1}, {Key: "item_bytes", Value: 1},
	{Key: "stored_bytes", Value: 1}}

// summaries reads the summary of every document of c. Stats and Check
// count in the client over this projection (payloads are not read):
// it needs nothing beyond find, which every server and FerretDB answer
// alike.
func summaries(ctx context.Context, c *mongo.Collection) ([]summaryDoc, error) {
	cur, err := c.Find(ctx, bson.D{}, options.Find().SetProjection(summaryProjection).SetBatchSize(5000))
	if err != nil {
		return nil, err
	}
	var out []summaryDoc
	err = cur.All(ctx, &out)
	return out, err
}

// Stats implements crawlkeeper.Store.
func (s *Store) Stats(ctx context.Context) (*crawlkeeper.Stats, error) {
	st := &crawlkeeper.Stats{Sources: map[string]*crawlkeeper.SourceStats{}}
	src := func(name string) *crawlkeeper.SourceStats {
		ss := st.Sources[name]
		if ss == nil {
			ss = &crawlkeeper.SourceStats{}
			st.Sources[name] = ss
		}
		return ss
	}
	active, err := summaries(ctx, s.active)
	if err != nil {
		return nil, s.wrap("stats", err)
	}
	for _, d := range active {
		ss := src(d.Source)
		ss.Active++
		st.Active++
		if len(d.DateErrors) > 0 {
			ss.DateErrors++
			ss.ActiveDateErrors++
			st.DateErrors++
		}
	}
	archived, err := summaries(ctx, s.archive)
	if err != nil {
		return nil, s.wrap("stats", err)
	}
	for _, d := range archived {
		ss := src(d.Source)
		ss.Archived++
		st.Archived++
		if ss.ArchivedByReason == nil {
			ss.ArchivedByReason = map[crawlkeeper.ArchiveReason]int64{}
		}
		ss.ArchivedByReason[crawlkeeper.ArchiveReason(d.ArchiveReason)]++
		if len(d.DateErrors) > 0 {
			ss.DateErrors++
			st.DateErrors++
		}
		st.ArchiveRawBytes += d.ItemBytes
		st.ArchiveStoredBytes += d.StoredBytes
	}
	if st.History, err = s.history.CountDocuments(ctx, bson.D{}); err != nil {
		return nil, s.wrap("stats", err)
	}
	cur, err := s.deliveries.Find(ctx, bson.D{})
	if err != nil {
		return nil, s.wrap("stats", err)
	}
	var counts []struct {
		Source     string `bson:"_id"`
		Deliveries int64  `bson:"deliveries"`
		Duplicates int64  `bson:"duplicates"`
	}
	if err := cur.All(ctx, &counts); err != nil {
		return nil, s.wrap("stats", err)
	}
	for _, c := range counts {
		st.AddDeliveries([]crawlkeeper.DeliveryCount{{Source: c.Source, Deliveries: c.Deliveries, Duplicates: c.Duplicates}})
	}
	return st, nil
}

// Check implements crawlkeeper.Store with the invariants of the other
// stores. It first repairs moves abandoned for longer than staleIntent and
// settles rekey intents (repairRekeys, clearLeftMarks); a record in both
// collections whose move or merge is still in flight (it has an intent or
// a merge's lock) is not a violation, since every read resolves it to its
// active copy. A missing index (see indexSets) is a violation too.
func (s *Store) Check(ctx context.Context) (*crawlkeeper.CheckReport, error) {
	if err := s.repair(ctx, time.Now().Add(-staleIntent)); err != nil {
		return nil, err
	}
	if err := s.repairRekeys(ctx, s.staleBefore(), true); err != nil {
		return nil, err
	}
	if err := s.clearLeftMarks(ctx); err != nil {
		return nil, err
	}
	rep := &crawlkeeper.CheckReport{Violations: []crawlkeeper.Violation{}}
	perKind := map[string]int{}
	add := func(kind string, id int64, key string, a, b int64) {
		if perKind[kind] >= storeenc.MaxViolations {
			return
		}
		perKind[kind]++
		rep.Violations = append(rep.Violations, crawlkeeper.Violation{Kind: kind, ID: id, Key: key, Message: storeenc.ViolationMessage(kind, id, key, a, b)})
	}
	moving, err := s.moving(ctx, nil)
	if err != nil {
		return nil, s.wrap("check", err)
	}
	active, err := summaries(ctx, s.active)
	if err != nil {
		return nil, s.wrap("check", err)
	}
	archived, err := summaries(ctx, s.archive)
	if err != nil {
		return nil, s.wrap("check", err)
	}
	version := make(map[int64]int64, len(active)+len(archived))
	archivedByKey := make(map[string]int64, len(archived))
	archivedIDs := make(map[int64]bool, len(archived))
	var maxID int64
	for _, d := range archived {
		archivedByKey[d.Key], archivedIDs[d.ID] = d.ID, true
		version[d.ID] = d.Version
		maxID = max(maxID, d.ID)
	}
	for _, d := range active {
		version[d.ID] = d.Version // the active copy counts, as for reads
		maxID = max(maxID, d.ID)
		if moving[d.ID] {
			continue
		}
		if rid, ok := archivedByKey[d.Key]; ok {
			add("key_in_both", d.ID, d.Key, rid, 0)
		}
		if archivedIDs[d.ID] {
			add("duplicate_id", d.ID, d.Key, 0, 0)
		}
	}
	for _, list := range [][]summaryDoc{active, archived} {
		for _, d := range list {
			if d.CrawledAt > d.LastUpdatedAt {
				add("crawled_after_updated", d.ID, d.Key, d.CrawledAt, d.LastUpdatedAt)
			}
		}
	}
	// History: the kept versions below the record's version must be a
	// contiguous run ending just before it. Entries at or above it are
	// left over from an interrupted ingest (see the package notes).
	cur, err := s.history.Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "record_id", Value: 1}, {Key: "version", Value: 1}}).SetBatchSize(5000))
	if err != nil {
		return nil, s.wrap("check", err)
	}
	var hs []struct {
		RecordID int64 `bson:"record_id"`
		Version  int64 `bson:"version"`
	}
	if err := cur.All(ctx, &hs); err != nil {
		return nil, s.wrap("check", err)
	}
	kept := map[int64][]int64{}
	var order []int64
	for _, h := range hs {
		if _, ok := kept[h.RecordID]; !ok {
			order = append(order, h.RecordID)
		}
		kept[h.RecordID] = append(kept[h.RecordID], h.Version)
	}
	slices.Sort(order)
	for _, id := range order {
		v, ok := version[id]
		if !ok {
			// A purge in progress deletes the record before its history;
			// its intent is repaired once it is stale.
			if !moving[id] {
				add("history_orphan", id, "", 0, 0)
			}
			continue
		}
		var vs []int64
		for _, x := range kept[id] {
			if x < v {
				vs = append(vs, x)
			}
		}
		if len(vs) == 0 {
			continue
		}
		lo, hi := slices.Min(vs), slices.Max(vs)
		if int64(len(vs)) != hi-lo+1 || hi != v-1 {
			add("history_gap", id, "", v, hi-lo+1-int64(len(vs)))
		}
	}
	for _, list := range [][]summaryDoc{active, archived} {
		for _, d := range list {
			if d.Version < 1 {
				add("version_invalid", d.ID, d.Key, d.Version, 0)
			}
		}
	}
	last, err := s.lastID(ctx)
	if err != nil {
		return nil, s.wrap("check", err)
	}
	if maxID > last {
		add("id_counter", maxID, "", last+1, 0)
	}
	missing, err := s.missingIndexes(ctx)
	if err != nil {
		return nil, s.wrap("check", err)
	}
	rep.Violations = append(rep.Violations, missing...)
	if err := s.checkSearch(ctx, func(v crawlkeeper.Violation) { rep.Violations = append(rep.Violations, v) }); err != nil {
		return nil, err
	}
	rep.OK = len(rep.Violations) == 0
	return rep, nil
}
