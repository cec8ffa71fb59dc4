package backends_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/backends"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func TestOpenStoreErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name, url, code, want string
	}{
		{"UnknownScheme", "ftp://u:secret@x/y", crawlkeeper.EINVALID, `unknown store scheme "ftp"`},
		{"NotAURL", "postgres://u:secret@host:5432%zz/db", crawlkeeper.EINVALID, "is not a URL"},
		// The server schemes reach their backend, which reports the
		// closed port as unavailable.
		{"Postgres", "postgres://u:secret@127.0.0.1:1/db?connect_timeout=2", crawlkeeper.EUNAVAILABLE, "PostgreSQL"},
		{"PostgreSQL", "postgresql://u:secret@127.0.0.1:1/db?connect_timeout=2", crawlkeeper.EUNAVAILABLE, "PostgreSQL"},
		{"MySQL", "mysql://u:secret@127.0.0.1:1/db?timeout=2s", crawlkeeper.EUNAVAILABLE, "MySQL"},
		{"MariaDB", "mariadb://u:secret@127.0.0.1:1/db?timeout=2s", crawlkeeper.EUNAVAILABLE, "MySQL/MariaDB"},
		{"MongoDB", "mongodb://u:secret@127.0.0.1:1/db?serverSelectionTimeoutMS=2000", crawlkeeper.EUNAVAILABLE, "MongoDB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := backends.OpenStore(ctx, tc.url, t.TempDir())
			if err == nil {
				s.Close()
				t.Fatalf("opened %s", tc.url)
			}
			if crawlkeeper.ErrorCode(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q (code %s), want code %s and %q", err, crawlkeeper.ErrorCode(err), tc.code, tc.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Fatalf("error shows the password: %v", err)
			}
		})
	}
}

// TestOpenScratchMongoDB opens a scratch store on the MongoDB test server,
// as the benchmark does, and checks that closing it drops its database.
// Collections are listed per database rather than listing databases,
// which on FerretDB waits for writes in every other database.
func TestOpenScratchMongoDB(t *testing.T) {
	base := os.Getenv("CRAWLKEEPER_TEST_MONGO")
	if base == "" {
		t.Skip("set CRAWLKEEPER_TEST_MONGO to a MongoDB URL (e.g. mongodb://127.0.0.1:27017/) to run the MongoDB backend tests")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, closeFn, err := backends.OpenScratch(ctx, base, t.TempDir(), "backends test")
	if err != nil {
		t.Fatal(err)
	}
	sm, ok := st.(interface{ Database() *mongo.Database })
	if !ok {
		closeFn()
		t.Fatalf("scratch store is a %T, want the MongoDB store", st)
	}
	name := sm.Database().Name()
	before, err := sm.Database().ListCollectionNames(ctx, bson.D{})
	if err != nil || !slices.Contains(before, "active") {
		closeFn()
		t.Fatalf("scratch database %s has collections %v (%v), want the store's", name, before, err)
	}
	closeFn()
	client, err := mongo.Connect(options.Client().ApplyURI(base))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(context.Background())
	after, err := client.Database(name).ListCollectionNames(ctx, bson.D{})
	if err != nil || len(after) != 0 {
		t.Fatalf("scratch database %s still has %v after close (%v)", name, after, err)
	}
}
