// Package mongodb holds crawlkeeper's MongoDB code
// (go.mongodb.org/mongo-driver/v2): the record store selected by
// `--store mongodb://...` (Store; db.go explains how it stays correct
// without multi-document transactions), and, in this file, the reader of
// an existing crawl collection for `crawlkeeper import`: every document
// becomes a JSON item that goes through the normal ingest path, so dedup
// applies.
package mongodb

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// DefaultTimeFields are the document fields that may hold when an item
// was first crawled, in the spellings crawlers and ODMs commonly use.
var DefaultTimeFields = []string{
	"crawled_at", "crawledAt", "first_seen", "firstSeen", "first_seen_at",
	"created_at", "createdAt", "scraped_at", "scrapedAt", "fetched_at", "fetchedAt",
	"inserted_at", "insertedAt", "date_added", "updated_at", "updatedAt",
}

// IDTime names the _id's creation time as the source of _crawled_at in
// ReadReport.CrawledAtFrom.
const IDTime = "_id"

// ReadOptions configure ReadCollection.
type ReadOptions struct {
	// URL is a mongodb:// or mongodb+srv:// URL; its path names the
	// database unless Database is set.
	URL        string
	Database   string
	Collection string
	// TimeFields are the fields _crawled_at is taken from: the earliest
	// readable time among them. Defaults to DefaultTimeFields.
	TimeFields []string
	// Total, when set, is called once with the collection's estimated
	// size before reading, for progress.
	Total func(n int64)
}

// ReadReport says what ReadCollection read.
type ReadReport struct {
	Database   string `json:"database"`
	Collection string `json:"collection"`
	Documents  int    `json:"documents"`
	// CrawledAtFrom counts documents by the field their _crawled_at came
	// from: a time field, "_id" (the ObjectId's creation time) or
	// "_crawled_at" (the document had one).
	CrawledAtFrom map[string]int `json:"crawled_at_from"`
	// NoTime counts documents without any time: crawlkeeper gives them the
	// import time.
	NoTime int `json:"no_time"`
}

// ReadCollection reads every document of the collection in _id order and
// calls fn with it converted to a JSON item: ObjectIds become hex strings,
// dates RFC 3339 strings in UTC, decimals strings, binary base64, and
// _crawled_at is set from the earliest time field (see ReadOptions), else
// from an ObjectId _id's creation time. The _id itself is dropped: it
// names the row in the old collection, not the item, and would make every
// duplicate look distinct. An error from fn stops the read.
func ReadCollection(ctx context.Context, opts ReadOptions, fn func(item map[string]any) error) (*ReadReport, error) {
	dbName, err := importDatabase(opts)
	if err != nil {
		return nil, err
	}
	if opts.Collection == "" {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "name the collection to import with --collection")
	}
	fields := opts.TimeFields
	if fields == nil {
		fields = DefaultTimeFields
	}
	client, err := mongo.Connect(options.Client().ApplyURI(opts.URL).SetServerSelectionTimeout(15 * time.Second).SetAppName("crawlkeeper-import"))
	if err != nil {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "MongoDB URL %s: %v", importRedact(opts.URL), err)
	}
	defer client.Disconnect(context.WithoutCancel(ctx))
	db := client.Database(dbName)
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return nil, &crawlkeeper.Error{Code: crawlkeeper.EUNAVAILABLE, Message: fmt.Sprintf("list the collections of %s on %s (is the server up?)", dbName, importRedact(opts.URL)), Err: err}
	}
	found := false
	for _, n := range names {
		found = found || n == opts.Collection
	}
	if !found {
		sort.Strings(names)
		return nil, crawlkeeper.Errorf(crawlkeeper.ENOTFOUND, "database %s has no collection %q; it has: %s", dbName, opts.Collection, strings.Join(names, ", "))
	}
	coll := db.Collection(opts.Collection)
	if opts.Total != nil {
		if n, err := coll.EstimatedDocumentCount(ctx); err == nil {
			opts.Total(n)
		}
	}
	cur, err := coll.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetBatchSize(500))
	if err != nil {
		return nil, fmt.Errorf("read %s.%s: %w", dbName, opts.Collection, err)
	}
	defer cur.Close(context.WithoutCancel(ctx))
	rep := &ReadReport{Database: dbName, Collection: opts.Collection, CrawledAtFrom: map[string]int{}}
	for cur.Next(ctx) {
		var doc bson.D
		if err := cur.Decode(&doc); err != nil {
			return rep, fmt.Errorf("decode document %d of %s.%s: %w", rep.Documents+1, dbName, opts.Collection, err)
		}
		item, from := ImportItem(doc, fields)
		rep.Documents++
		if from == "" {
			rep.NoTime++
		} else {
			rep.CrawledAtFrom[from]++
		}
		if err := fn(item); err != nil {
			return rep, err
		}
	}
	if err := cur.Err(); err != nil {
		return rep, fmt.Errorf("read %s.%s after %d documents: %w", dbName, opts.Collection, rep.Documents, err)
	}
	return rep, nil
}

// importDatabase picks the database: the option, else the URL's path.
func importDatabase(opts ReadOptions) (string, error) {
	if opts.Database != "" {
		return opts.Database, nil
	}
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "mongodb" && u.Scheme != "mongodb+srv") {
		return "", crawlkeeper.Errorf(crawlkeeper.EINVALID, "--from %q: use a MongoDB URL such as mongodb://host:27017/crawl", importRedact(opts.URL))
	}
	if name := strings.Trim(u.Path, "/"); name != "" {
		return name, nil
	}
	return "", crawlkeeper.Errorf(crawlkeeper.EINVALID, "--from %s names no database: add it to the URL (mongodb://host:27017/DATABASE) or give --database", importRedact(opts.URL))
}

// importRedact hides a password in a URL shown to people.
func importRedact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// ImportItem converts one document into an item and says where its
// _crawled_at came from ("" when it has none). fields are the time fields
// to look at, as in ReadOptions.TimeFields.
func ImportItem(doc bson.D, fields []string) (map[string]any, string) {
	item := make(map[string]any, len(doc)+1)
	var id any
	for _, e := range doc {
		if e.Key == "_id" {
			id = e.Value
			continue
		}
		item[e.Key] = importValue(e.Value)
	}
	if _, ok := item[crawlkeeper.MetaCrawledAt]; ok {
		return item, crawlkeeper.MetaCrawledAt
	}
	var (
		best     time.Time
		bestFrom string
		fallback any
		fbFrom   string
	)
	for _, f := range fields {
		raw, ok := docValue(doc, f)
		if !ok {
			continue
		}
		t, ok := importTime(raw)
		if !ok {
			// A time in a form only crawlkeeper's date parser reads
			// ("15.05.2024", epoch seconds): used when nothing better is.
			if fallback == nil {
				switch v := item[f].(type) {
				case string:
					if strings.TrimSpace(v) != "" {
						fallback, fbFrom = v, f
					}
				case int32, int64, float64:
					fallback, fbFrom = fmt.Sprint(v), f
				}
			}
			continue
		}
		if bestFrom == "" || t.Before(best) {
			best, bestFrom = t, f
		}
	}
	switch {
	case bestFrom != "":
		item[crawlkeeper.MetaCrawledAt] = best.UTC().Format(time.RFC3339Nano)
		return item, bestFrom
	case fallback != nil:
		item[crawlkeeper.MetaCrawledAt] = fallback
		return item, fbFrom
	}
	if oid, ok := id.(bson.ObjectID); ok && !oid.IsZero() {
		// An ObjectId starts with its creation second: the best guess of
		// when the crawler first stored the item.
		item[crawlkeeper.MetaCrawledAt] = oid.Timestamp().UTC().Format(time.RFC3339)
		return item, IDTime
	}
	return item, ""
}

func docValue(doc bson.D, key string) (any, bool) {
	for _, e := range doc {
		if e.Key == key {
			return e.Value, true
		}
	}
	return nil, false
}

// importTime reads a BSON date, a BSON timestamp or an RFC 3339 string.
func importTime(v any) (time.Time, bool) {
	switch x := v.(type) {
	case bson.DateTime:
		return x.Time(), true
	case time.Time:
		return x, true
	case bson.Timestamp:
		return time.Unix(int64(x.T), 0), true
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05"} {
			if t, err := time.Parse(layout, strings.TrimSpace(x)); err == nil {
				return t, true
			}
		}
	}
	return time.Time{}, false
}

// importValue converts a decoded BSON value into a value encoding/json
// writes sensibly.
func importValue(v any) any {
	switch x := v.(type) {
	case nil, bool, string, int32, int64:
		return x
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			// JSON has no NaN or infinity; keep what the value was.
			return fmt.Sprint(x)
		}
		return x
	case bson.D:
		m := make(map[string]any, len(x))
		for _, e := range x {
			m[e.Key] = importValue(e.Value)
		}
		return m
	case bson.M:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = importValue(e)
		}
		return m
	case bson.A:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = importValue(e)
		}
		return out
	case []any:
		return importValue(bson.A(x))
	case bson.ObjectID:
		return x.Hex()
	case bson.DateTime:
		return x.Time().UTC().Format(time.RFC3339Nano)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case bson.Timestamp:
		return time.Unix(int64(x.T), 0).UTC().Format(time.RFC3339)
	case bson.Decimal128:
		return x.String()
	case bson.Binary:
		if (x.Subtype == 0x04 || x.Subtype == 0x03) && len(x.Data) == 16 {
			h := hex.EncodeToString(x.Data)
			return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
		}
		return base64.StdEncoding.EncodeToString(x.Data)
	case bson.Regex:
		return "/" + x.Pattern + "/" + x.Options
	case bson.JavaScript:
		return string(x)
	case bson.Symbol:
		return string(x)
	case bson.CodeWithScope:
		return string(x.Code)
	case bson.DBPointer:
		return x.DB + "/" + x.Pointer.Hex()
	case bson.Null, bson.Undefined, bson.MinKey, bson.MaxKey:
		return nil
	default:
		return fmt.Sprint(x)
	}
}
