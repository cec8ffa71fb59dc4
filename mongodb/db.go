package mongodb

// # The store
//
// Store keeps crawlkeeper's records in a MongoDB database without
// multi-document transactions, so it runs on a single server as well as a
// replica set or a sharded cluster. Every write is a single-document
// operation conditioned on what was read:
//
//   - Each active and archived document carries rev, a counter that every
//     write to it increments. An update or delete names the rev it read
//     ({_id, rev}), so it applies only to the state its decision was made
//     on; when it matches nothing a concurrent writer won and the caller
//     gets ECONFLICT (ingest) or leaves the record for the next pass
//     (archive). Ingest is idempotent, so retrying converges.
//   - Keys are unique in active and in archive through unique indexes,
//     and across both through the keys collection: a new record first
//     inserts its key there (_id is the key), and the claim stays until
//     the record is purged. Moves keep the id, so they never touch it.
//   - Ids come in a range per batch, reserved by inserting a document
//     keyed by the range's first id right after the highest reservation
//     (see takeIDs): never reused, increasing in reservation order.
//
// # Moves without transactions
//
// A move between active and archive is a copy followed by a delete. An
// intent document in the moves collection, keyed by the record id, is
// inserted before the copy and removed after the delete; its insert fails
// when another process is moving the same record, so it also serves as
// the record's move lock. A crash between copy and delete leaves the
// record in both collections and its intent behind. The repair (run by
// Open, Archive, Restore, Purge and Check, for intents older than
// staleIntent) finishes or undoes each interrupted move:
//
//   - to archive: when the active copy still has the rev that was copied,
//     the move is finished by deleting it; otherwise the record changed
//     after the copy, the active copy wins and the archive copy is
//     deleted;
//   - to active (restore or revive): the active copy is the newer one and
//     the archive copy is deleted.
//
// Reads prefer the active copy, so while a move is in flight a record is
// never missing and never shown changed; Check does not count a record
// with an intent as stored twice.
//
// # History
//
// A changed record's previous version is written to history before the
// record itself. A crash between the two leaves a history entry whose
// version is not below the record's version; History and Check ignore
// such entries, and the next change of the record overwrites them —
// unless a rekey merge wrote the entry, which only a merge overwrites.
//
// # Merges
//
// A rekey merge (rekey.go) locks its records with move intents of kind
// rekey and marks each one (merging: the merge's id) at the rev it read;
// every conditional write to a record also requires it unmarked, and a
// writer that meets a mark settles the merge before it tries again.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
)

// DefaultDatabase is the database a mongodb:// URL without a path uses.
const DefaultDatabase = "crawlkeeper"

// staleIntent is how old a move intent must be before it is repaired:
// younger intents may belong to a move still running in another process,
// or be a purge's tombstone that must outlive late history writes.
const staleIntent = time.Minute

// Store is the MongoDB implementation of crawlkeeper.Store.
type Store struct {
	client *mongo.Client
	db     *mongo.Database
	where  string
	// durability is the setting; wc the write concern in force.
	durability crawlkeeper.Durability
	wc         *writeconcern.WriteConcern

	active, archive, history, moves *mongo.Collection
	// rekeys holds the intents of key changes and merges, staged the
	// documents a merge writes once committed (rekey.go).
	rekeys, staged *mongo.Collection
	// deliveries holds the per-source delivery counters (ingest.go).
	deliveries                          *mongo.Collection
	keys                                *mongo.Collection
	recordIDs, journalSeq               *mongo.Collection
	state, journal, leases, deadLetters *mongo.Collection
	// The embedded monitor's collections (see monitor.go).
	monTargets, monLog, monSnaps, monParts *mongo.Collection
	// logHint is the highest monitor log entry this store saw (see
	// highestLog).
	logHint atomic.Int64

	// noTextIndex says why search runs without a text index (the server
	// is FerretDB); empty on MongoDB.
	noTextIndex string

	// crashAt, when set, runs after each step of a move ("archive:locked",
	// "archive:copied", "archive:deleted", and the same for "active"), of
	// an ingest, a purge or a rekey ("merge:planned" and on, rekey.go);
	// an error stops the write there, as a crash would. Tests only.
	crashAt func(step string) error
	// clock, when set, is the time of rekey intents and of their
	// staleness (rekey.go). Tests only.
	clock func() time.Time
}

var _ crawlkeeper.Store = (*Store)(nil)

// Open connects to the MongoDB server of a mongodb:// or mongodb+srv://
// URL and uses the database named by its path (DefaultDatabase when it
// names none). It creates the collections' indexes and repairs moves that
// a crashed process left half done more than staleIntent ago.
func Open(ctx context.Context, rawURL string) (*Store, error) {
	return OpenWith(ctx, rawURL, crawlkeeper.StoreOptions{})
}

// OpenWith is Open with options. Durability full writes with a journaled
// write concern (j: true: the server acknowledges a write once it is in
// its on-disk journal); normal keeps the server's default. A write concern
// given in the URL (w, journal) wins.
func OpenWith(ctx context.Context, rawURL string, opts crawlkeeper.StoreOptions) (*Store, error) {
	durability := opts.Durability.OrDefault()
	if err := durability.Validate(); err != nil {
		return nil, err
	}
	where := storeenc.Redact(rawURL)
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "mongodb" && u.Scheme != "mongodb+srv") {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "store URL %s: use mongodb://host:27017/database", where)
	}
	name := strings.Trim(u.Path, "/")
	if name == "" {
		name = DefaultDatabase
	}
	return openDatabase(ctx, rawURL, name, durability, opts.MustExist)
}

func openDatabase(ctx context.Context, rawURL, name string, durability crawlkeeper.Durability, mustExist bool) (*Store, error) {
	where := storeenc.Redact(rawURL)
	// The defaults come first so that the URL's own options
	// (serverSelectionTimeoutMS, appName, w, journal) override them.
	co := options.Client().SetServerSelectionTimeout(15 * time.Second).SetAppName("crawlkeeper")
	if durability == crawlkeeper.DurabilityFull {
		co.SetWriteConcern(writeconcern.Journaled())
	}
	co.ApplyURI(rawURL)
	client, err := mongo.Connect(co)
	if err != nil {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "store URL %s: %v", where, storeenc.RedactErr(err, rawURL))
	}
	if err := client.Ping(ctx, nil); err != nil {
		client.Disconnect(context.WithoutCancel(ctx))
		return nil, &crawlkeeper.Error{Code: crawlkeeper.EUNAVAILABLE,
			Message: fmt.Sprintf("cannot reach MongoDB at %s: check that the server runs and the URL is right", where), Err: err}
	}
	db := client.Database(name)
	if mustExist {
		// createIndexes below would create the collections.
		names, err := db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: "active"}})
		if err != nil {
			client.Disconnect(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("open %s: %w", where, err)
		}
		if len(names) == 0 {
			client.Disconnect(context.WithoutCancel(ctx))
			return nil, crawlkeeper.NoStoreError(where)
		}
	}
	s := &Store{
		client: client, db: db, where: where, durability: durability, wc: co.WriteConcern,
		active: db.Collection("active"), archive: db.Collection("archive"), history: db.Collection("history"),
		recordIDs: db.Collection("record_ids"), journalSeq: db.Collection("journal_seq"),
		moves: db.Collection("moves"), rekeys: db.Collection("rekeys"), staged: db.Collection("rekey_staged"), deliveries: db.Collection("deliveries"), keys: db.Collection("keys"), state: db.Collection("state"),
		journal: db.Collection("journal"), leases: db.Collection("leases"), deadLetters: db.Collection("dead_letters"),
		monTargets: db.Collection("monitor_targets"), monLog: db.Collection("monitor_log"),
		monSnaps: db.Collection("monitor_snapshots"), monParts: db.Collection("monitor_parts"),
	}
	if err := s.createIndexes(ctx); err != nil {
		client.Disconnect(context.WithoutCancel(ctx))
		return nil, s.wrap("create indexes", err)
	}
	// Only stale intents: a younger one may belong to a move another
	// process is running, or be a purge's tombstone (see Purge).
	if err := s.repair(ctx, time.Now().Add(-staleIntent)); err != nil {
		client.Disconnect(context.WithoutCancel(ctx))
		return nil, err
	}
	if err := s.repairRekeys(ctx, s.staleBefore(), false); err != nil && !errors.Is(err, errOldIntent) {
		client.Disconnect(context.WithoutCancel(ctx))
		return nil, err
	}
	return s, nil
}

var _ crawlkeeper.DurabilityReporter = (*Store)(nil)

// DurabilityStatus implements crawlkeeper.DurabilityReporter from the
// write concern in force.
func (s *Store) DurabilityStatus(ctx context.Context) (*crawlkeeper.DurabilityStatus, error) {
	st := &crawlkeeper.DurabilityStatus{Setting: s.durability}
	if s.wc != nil && s.wc.Journal != nil && *s.wc.Journal {
		st.PowerLossSafe = true
		st.Detail = "MongoDB write concern j: true: every write is in the server's on-disk journal before it is acknowledged"
	} else {
		st.Detail = "MongoDB write concern without j: true: the server may acknowledge a write before its journal is on disk (its journal commit interval is 100 ms by default); store.durability: full asks for journaled writes"
	}
	return st, nil
}

// Database returns the store's database, for the benchmark's raw
// baselines and for tests.
func (s *Store) Database() *mongo.Database { return s.db }

// Close disconnects from the server.
func (s *Store) Close() error {
	return s.client.Disconnect(context.Background())
}

func idx(unique bool, keys ...string) mongo.IndexModel {
	d := bson.D{}
	for _, k := range keys {
		dir := 1
		if strings.HasPrefix(k, "-") {
			k, dir = k[1:], -1
		}
		d = append(d, bson.E{Key: k, Value: dir})
	}
	m := mongo.IndexModel{Keys: d}
	if unique {
		m.Options = options.Index().SetUnique(true)
	}
	return m
}

// indexSpec is one index a collection must have: its keys in order
// ("-" before a name for descending) and whether it is unique.
type indexSpec struct {
	unique bool
	keys   []string
}

func ix(unique bool, keys ...string) indexSpec { return indexSpec{unique: unique, keys: keys} }

type indexSet struct {
	c     *mongo.Collection
	specs []indexSpec
}

// indexSets lists the indexes of every collection: those the other
// backends have, the unique key in each record collection, the archive
// rules' columns with id (the order SelectDue walks), (source,
// last_updated_at) for listings, the history's (record_id, version), and
// the lookups of rekey intents and staged documents. The archive has the
// indexes of active, so that queries on the archive (by crawl time, key,
// source, and in mongosh) are as fast, plus archived_at, which purges
// walk.
func (s *Store) indexSets() []indexSet {
	records := []indexSpec{ix(true, "key"), ix(false, "crawled_at", "_id"), ix(false, "last_updated_at", "_id"),
		ix(false, "event_at", "_id"), ix(false, "source", "last_updated_at"), ix(false, "date_errors")}
	return []indexSet{
		{s.active, records},
		{s.archive, append(slices.Clone(records), ix(false, "archived_at", "_id"))},
		{s.history, []indexSpec{ix(true, "record_id", "version"), ix(false, "valid_to")}},
		{s.journal, []indexSpec{ix(false, "kind", "_id")}},
		{s.deadLetters, []indexSpec{ix(false, "at", "_id")}},
		{s.monTargets, []indexSpec{ix(true, "name")}},
		{s.monParts, []indexSpec{ix(false, "v")}},
		// A done merge stays for a minute (rekey.go): a fast run keeps
		// many, which each merge looks up by record and each repair by
		// phase.
		{s.rekeys, []indexSpec{ix(false, "ids"), ix(false, "phase", "at")}},
		{s.staged, []indexSpec{ix(false, "intent", "n")}},
	}
}

// createIndexes creates the indexes of indexSets. Creating an index that
// exists is a no-op, so every Open runs it.
func (s *Store) createIndexes(ctx context.Context) error {
	for _, set := range s.indexSets() {
		// One index per command: FerretDB 1.24 drops the connection when
		// a createIndexes with several indexes names one that exists.
		for _, spec := range set.specs {
			if _, err := set.c.Indexes().CreateOne(ctx, idx(spec.unique, spec.keys...)); err != nil {
				return fmt.Errorf("%s: %w", set.c.Name(), err)
			}
		}
	}
	return s.createSearchIndexes(ctx)
}

// NewScratch returns a store URL naming a new database (named after name)
// on the server of baseURL; drop removes the database. MongoDB creates a
// database on first write, so nothing is created here. Tests and the
// benchmark use throw-away databases.
func NewScratch(ctx context.Context, baseURL, name string) (string, func(), error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "mongodb" && u.Scheme != "mongodb+srv") {
		return "", nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "store URL %s: use mongodb://host:27017/database", storeenc.Redact(baseURL))
	}
	db := storeenc.ScratchName(name)
	u.Path = "/" + db
	drop := func() {
		client, err := mongo.Connect(options.Client().ApplyURI(baseURL))
		if err != nil {
			return
		}
		client.Database(db).Drop(context.Background())
		client.Disconnect(context.Background())
	}
	return u.String(), drop, nil
}

// errConflict is returned inside operations when a conditional write
// matched nothing; wrap turns it into ECONFLICT.
var errConflict = errors.New("a concurrent change won")

// wrap maps err to the application's error codes.
func (s *Store) wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	var ce *crawlkeeper.Error
	if errors.As(err, &ce) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", what, err)
	}
	switch {
	case errors.Is(err, errConflict):
		return &crawlkeeper.Error{Code: crawlkeeper.ECONFLICT, Message: what + ": a concurrent change won; retry", Err: err}
	case mongo.IsDuplicateKeyError(err):
		return &crawlkeeper.Error{Code: crawlkeeper.ECONFLICT, Message: what + ": a concurrent change stored the same key; retry", Err: err}
	case mongo.IsNetworkError(err) || mongo.IsTimeout(err) || errors.Is(err, mongo.ErrClientDisconnected) ||
		strings.Contains(err.Error(), "server selection error"):
		return &crawlkeeper.Error{Code: crawlkeeper.EUNAVAILABLE, Message: fmt.Sprintf("%s: MongoDB at %s did not answer; retry later", what, s.where), Err: err}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// duplicateIndexes returns the positions of the documents of a failed
// unordered InsertMany that were rejected as duplicates, and whether every
// failure was a duplicate.
func duplicateIndexes(err error) (map[int]bool, bool) {
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || bwe.WriteConcernError != nil {
		return nil, false
	}
	out := map[int]bool{}
	for _, we := range bwe.WriteErrors {
		if we.Code != 11000 {
			return nil, false
		}
		out[we.Index] = true
	}
	return out, true
}

// step runs the crash hook of tests after a step of a move.
func (s *Store) step(name string) error {
	if s.crashAt == nil {
		return nil
	}
	return s.crashAt(name)
}
