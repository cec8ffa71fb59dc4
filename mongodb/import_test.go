package mongodb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
	"github.com/crawlkeeper/crawlkeeper/mongodb"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"
)

func TestImportItemConvertsBSON(t *testing.T) {
	oid := bson.NewObjectIDFromTimestamp(time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC))
	ref, _ := bson.ObjectIDFromHex("65f1c0ffee0000000000abcd")
	dec, _ := bson.ParseDecimal128("12.50")
	doc := bson.D{
		{Key: "_id", Value: oid},
		{Key: "title", Value: "Data Engineer"},
		{Key: "company_id", Value: ref},
		{Key: "posted", Value: bson.NewDateTimeFromTime(time.Date(2024, 5, 2, 9, 30, 0, 0, time.UTC))},
		{Key: "salary", Value: dec},
		{Key: "count", Value: int32(3)},
		{Key: "big", Value: int64(1) << 40},
		{Key: "bad", Value: math.NaN()},
		{Key: "tags", Value: bson.A{"go", bson.D{{Key: "k", Value: int64(1)}}}},
		{Key: "uuid", Value: bson.Binary{Subtype: 4, Data: []byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0}}},
		{Key: "raw", Value: bson.Binary{Data: []byte("hi")}},
		{Key: "pattern", Value: bson.Regex{Pattern: "^a", Options: "i"}},
		{Key: "nothing", Value: nil},
		{Key: "__v", Value: int32(0)},
	}
	item, from := mongodb.ImportItem(doc, mongodb.DefaultTimeFields)
	b, err := json.Marshal(item)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"__v":0,"_crawled_at":"2024-05-01T08:00:00Z","bad":"NaN","big":1099511627776,"company_id":"65f1c0ffee0000000000abcd","count":3,"nothing":null,` +
		`"pattern":"/^a/i","posted":"2024-05-02T09:30:00Z","raw":"aGk=","salary":"12.50","tags":["go",{"k":1}],"title":"Data Engineer","uuid":"12345678-9abc-def0-1234-56789abcdef0"}`
	if string(b) != want {
		t.Fatalf("item\n got %s\nwant %s", b, want)
	}
	if from != mongodb.IDTime {
		t.Fatalf("crawled_at from %q, want the _id", from)
	}
}

func TestImportItemTakesTheEarliestTime(t *testing.T) {
	at := func(s string) bson.DateTime {
		tm, _ := time.Parse(time.RFC3339, s)
		return bson.NewDateTimeFromTime(tm)
	}
	for _, tc := range []struct {
		name      string
		doc       bson.D
		crawledAt any
		from      string
	}{
		{"earliest of several", bson.D{{Key: "updated_at", Value: at("2024-03-01T00:00:00Z")}, {Key: "created_at", Value: at("2024-01-01T00:00:00Z")}, {Key: "scraped_at", Value: "2024-02-01T00:00:00Z"}},
			"2024-01-01T00:00:00Z", "created_at"},
		{"camelCase", bson.D{{Key: "createdAt", Value: at("2023-07-01T12:00:00Z")}}, "2023-07-01T12:00:00Z", "createdAt"},
		{"string time", bson.D{{Key: "scraped_at", Value: "2024-02-01 10:00:00"}}, "2024-02-01T10:00:00Z", "scraped_at"},
		{"timestamp", bson.D{{Key: "first_seen", Value: bson.Timestamp{T: 1700000000}}}, "2023-11-14T22:13:20Z", "first_seen"},
		{"a form only the date parser reads", bson.D{{Key: "crawled_at", Value: "15.05.2024"}}, "15.05.2024", "crawled_at"},
		{"the document's own _crawled_at", bson.D{{Key: "_crawled_at", Value: "2020-01-01"}, {Key: "created_at", Value: at("2019-01-01T00:00:00Z")}}, "2020-01-01", "_crawled_at"},
		{"no time at all", bson.D{{Key: "_id", Value: "custom-id"}, {Key: "title", Value: "x"}}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			item, from := mongodb.ImportItem(tc.doc, mongodb.DefaultTimeFields)
			if item["_crawled_at"] != tc.crawledAt || from != tc.from {
				t.Fatalf("_crawled_at %v from %q, want %v from %q", item["_crawled_at"], from, tc.crawledAt, tc.from)
			}
			if _, ok := item["_id"]; ok {
				t.Fatal("_id kept")
			}
		})
	}
}

// importTestDatabase returns a MongoDB URL with a fresh database, dropped
// when the test ends, from CRAWLKEEPER_TEST_MONGO.
func importTestDatabase(t *testing.T) (string, *mongo.Database) {
	t.Helper()
	u := testdb.MongoURL(t)
	client, err := mongo.Connect(options.Client().ApplyURI(u))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Disconnect(context.Background()) })
	cs, err := connstring.ParseAndValidate(u)
	if err != nil {
		t.Fatal(err)
	}
	return u, client.Database(cs.Database)
}

func TestReadCollection(t *testing.T) {
	url, db := importTestDatabase(t)
	ctx := context.Background()
	var docs []any
	for i := 0; i < 5; i++ {
		docs = append(docs, bson.D{{Key: "title", Value: fmt.Sprintf("job %d", i)}, {Key: "n", Value: int32(i)},
			{Key: "created_at", Value: bson.NewDateTimeFromTime(time.Date(2024, 1, 1+i, 0, 0, 0, 0, time.UTC))}})
	}
	if _, err := db.Collection("jobs").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	db.Collection("other").InsertOne(ctx, bson.D{{Key: "x", Value: 1}})
	var got []map[string]any
	var total int64
	rep, err := mongodb.ReadCollection(ctx, mongodb.ReadOptions{URL: url, Collection: "jobs", Total: func(n int64) { total = n }}, func(item map[string]any) error {
		got = append(got, item)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Documents != 5 || rep.CrawledAtFrom["created_at"] != 5 || len(got) != 5 || total != 5 {
		t.Fatalf("report %+v, %d items, total %d", rep, len(got), total)
	}
	for i, it := range got {
		if it["n"] != int32(i) || it["_crawled_at"] != fmt.Sprintf("2024-01-%02dT00:00:00Z", i+1) {
			t.Fatalf("item %d: %v", i, it)
		}
	}

	_, err = mongodb.ReadCollection(ctx, mongodb.ReadOptions{URL: url, Collection: "jbos"}, func(map[string]any) error { return nil })
	if err == nil || !strings.Contains(err.Error(), `no collection "jbos"; it has: jobs, other`) {
		t.Fatalf("unknown collection: %v", err)
	}
}
