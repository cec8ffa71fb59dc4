package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"
)

// TestImportFromMongo imports a crawl kept the "everything in one
// collection" way, duplicates included, from the server named by
// CRAWLKEEPER_TEST_MONGO.
func TestImportFromMongo(t *testing.T) {
	ctx := context.Background()
	base := testdb.MongoURL(t)
	client, err := mongo.Connect(options.Client().ApplyURI(base))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(ctx)
	cs, err := connstring.ParseAndValidate(base)
	if err != nil {
		t.Fatal(err)
	}
	db := client.Database(cs.Database)
	date := func(s string) bson.DateTime {
		tm, _ := time.Parse(time.RFC3339, s)
		return bson.NewDateTimeFromTime(tm)
	}
	company := bson.NewObjectID()
	docs := []any{
		bson.D{{Key: "title", Value: "Data Engineer"}, {Key: "url", Value: "https://jobs.example/1"}, {Key: "salary", Value: int32(100)},
			{Key: "company", Value: company}, {Key: "created_at", Value: date("2024-01-10T08:00:00Z")}, {Key: "updated_at", Value: date("2024-01-12T08:00:00Z")}},
		// The same job crawled again with the same content: merged, identical.
		bson.D{{Key: "title", Value: "Data Engineer"}, {Key: "url", Value: "HTTPS://JOBS.example/1#apply"}, {Key: "salary", Value: int32(100)},
			{Key: "company", Value: company}, {Key: "created_at", Value: date("2024-01-11T08:00:00Z")}},
		// ... and with a new salary: merged as a new version.
		bson.D{{Key: "title", Value: "Data Engineer"}, {Key: "url", Value: "https://jobs.example/1"}, {Key: "salary", Value: int32(120)},
			{Key: "company", Value: company}, {Key: "created_at", Value: date("2024-02-01T08:00:00Z")}},
		bson.D{{Key: "title", Value: "SRE"}, {Key: "url", Value: "https://jobs.example/2"}, {Key: "scraped_at", Value: "2024-03-05T10:00:00Z"}},
		bson.D{{Key: "_id", Value: bson.NewObjectIDFromTimestamp(time.Date(2023, 6, 1, 0, 0, 0, 0, time.UTC))}, {Key: "title", Value: "Old"}, {Key: "url", Value: "https://jobs.example/3"}},
	}
	if _, err := db.Collection("items").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t)
	name := cs.Database
	out := c.ok("", "import", "--from", base, "--collection", "items", "--source", "jobs", "--json", "--now", "2026-01-01T00:00:00Z")
	var rep importReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Documents != 5 || rep.Inserted != 3 || rep.Merged != 2 || rep.Identical != 1 || rep.Changed != 1 || rep.Rejected != 0 {
		t.Fatalf("report %s", out)
	}
	if rep.CrawledAtFrom["created_at"] != 3 || rep.CrawledAtFrom["scraped_at"] != 1 || rep.CrawledAtFrom["_id"] != 1 {
		t.Fatalf("crawled_at from %v", rep.CrawledAtFrom)
	}
	recs := decodeLines(t, c.ok("", "records", "--source", "jobs"))
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	want := map[string]struct {
		crawledAt string
		version   float64
	}{
		"Data Engineer": {"2024-01-10T08:00:00Z", 2},
		"SRE":           {"2024-03-05T10:00:00Z", 1},
		"Old":           {"2023-06-01T00:00:00Z", 1},
	}
	for _, r := range recs {
		w := want[r["title"].(string)]
		if r["crawled_at"] != w.crawledAt || r["version"] != w.version {
			t.Errorf("%s: crawled_at %v version %v, want %s and %v", r["title"], r["crawled_at"], r["version"], w.crawledAt, w.version)
		}
		item := r["item"].(map[string]any)
		if r["title"] == "Data Engineer" && (item["company"] != company.Hex() || item["salary"] != float64(120)) {
			t.Errorf("item %v", item)
		}
	}

	// Importing again merges every document into the records it made.
	out = c.ok("", "import", "--from", base, "--collection", "items", "--source", "jobs")
	if !strings.Contains(out, "read 5 documents from "+name+".items: 0 new records, 5 merged into an existing record") {
		t.Fatalf("second import: %s", out)
	}
}

func TestImportMistakes(t *testing.T) {
	c := newCLI(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"import", "--collection", "x"}, 2, "needs --from"},
		{[]string{"import", "--from", "mongodb://127.0.0.1:1/db"}, 2, "--collection"},
		{[]string{"import", "--from", "postgres://h/db", "--collection", "x"}, 1, "use a MongoDB URL"},
		{[]string{"import", "--from", "mongodb://u:secret@127.0.0.1:1", "--collection", "x"}, 1, "names no database"},
	} {
		_, errs, code := c.run("", tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) || strings.Contains(errs, "secret") {
			t.Errorf("%v: exit %d, %s", tc.args, code, errs)
		}
	}
}
