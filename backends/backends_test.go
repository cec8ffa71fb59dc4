package backends_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/backends"
	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
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

// TestOpenStoreMustExist opens an empty location of every kind with
// MustExist: the error names the location and nothing is created there,
// which a second attempt proves by failing the same way; once a store
// was created, MustExist opens it.
func TestOpenStoreMustExist(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	must := crawlkeeper.StoreOptions{MustExist: true}
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) {
			u := testdb.URL(t, kind)
			// A server store is named by its URL, a SQLite one by its file.
			where := kind
			if kind == testdb.SQLite {
				where = strings.TrimPrefix(u, "sqlite://")
			}
			for range 2 {
				st, err := backends.OpenStoreWith(ctx, u, "", must)
				if err == nil {
					st.Close()
					t.Fatalf("opened a store that does not exist at %s", u)
				}
				if crawlkeeper.ErrorCode(err) != crawlkeeper.ENOTFOUND || !strings.HasPrefix(err.Error(), "no crawlkeeper store in "+where) ||
					!strings.HasSuffix(err.Error(), " (ingest, serve or demo creates one)") {
					t.Fatalf("error %q (code %s)", err, crawlkeeper.ErrorCode(err))
				}
			}
			if kind == testdb.SQLite {
				if _, err := os.Stat(where); !os.IsNotExist(err) {
					t.Fatalf("the SQLite file was created (%v)", err)
				}
			}
			st, err := backends.OpenStore(ctx, u, "")
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			st, err = backends.OpenStoreWith(ctx, u, "", must)
			if err != nil {
				t.Fatalf("open the created store with MustExist: %v", err)
			}
			st.Close()
		})
	}
	t.Run("DataFolder", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "typo")
		_, err := backends.OpenStoreWith(ctx, "", dir, must)
		if want := "no crawlkeeper store in " + dir + " (ingest, serve or demo creates one)"; err == nil || err.Error() != want {
			t.Fatalf("error %v, want %q", err, want)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("the folder was created (%v)", err)
		}
	})
	t.Run("NotAStore", func(t *testing.T) {
		// An empty file under the store's name is not a store either.
		dir := t.TempDir()
		path := filepath.Join(dir, backends.SQLiteFile)
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := backends.OpenStoreWith(ctx, "", dir, must)
		if want := "no crawlkeeper store in " + path + " (ingest, serve or demo creates one)"; err == nil || err.Error() != want {
			t.Fatalf("error %v, want %q", err, want)
		}
	})
	t.Run("OtherFile", func(t *testing.T) {
		// A file that is not SQLite: the error says what to check, and
		// the file is left as it was.
		path := filepath.Join(t.TempDir(), "notes.txt")
		text := []byte("not a database, only some text that fills more than one header's worth of bytes\n")
		if err := os.WriteFile(path, text, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := backends.OpenStoreWith(ctx, "sqlite://"+path, "", must)
		if err == nil || crawlkeeper.ErrorCode(err) != crawlkeeper.EINVALID || !strings.HasPrefix(err.Error(), "open "+path+": ") ||
			!strings.HasSuffix(err.Error(), ": is it a crawlkeeper store?") {
			t.Fatalf("error %v (code %s)", err, crawlkeeper.ErrorCode(err))
		}
		if got, _ := os.ReadFile(path); string(got) != string(text) {
			t.Fatalf("the file was changed: %q", got)
		}
	})
	t.Run("DataFolderIsAFile", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "data")
		if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := backends.OpenStoreWith(ctx, "", file, must)
		if err == nil || crawlkeeper.ErrorCode(err) != crawlkeeper.EINVALID || !strings.Contains(err.Error(), "not a directory") {
			t.Fatalf("error %v (code %s)", err, crawlkeeper.ErrorCode(err))
		}
	})
}
