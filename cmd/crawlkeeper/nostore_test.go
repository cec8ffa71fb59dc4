package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
)

// readCommands are the commands that read the store, or work on records
// already in it, each with the arguments it needs to reach the store. None
// may create a store: pointed at a folder or database without one, each
// fails and says which commands create one.
var readCommands = []struct {
	name string
	args []string
}{
	{"records", []string{"records"}},
	{"records --archived", []string{"records", "--archived"}},
	{"search", []string{"search", "engineer"}},
	{"stats", []string{"stats"}},
	{"history", []string{"history", "1"}},
	{"check", []string{"check"}},
	{"fields", []string{"fields"}},
	{"export", []string{"export", "out.jsonl"}},
	{"round status", []string{"round", "status", "--round", "7"}},
	{"round remaining", []string{"round", "remaining", "--round", "7"}},
	{"round failed", []string{"round", "failed", "--round", "7"}},
	{"next", []string{"next", "--source", "jobs", "--budget", "10/day"}},
	{"round diff", []string{"round", "diff", "--round", "7", "--vs", "6"}},
	{"round list", []string{"round", "list"}},
	{"round merge", []string{"round", "merge"}},
	{"target", []string{"target", "acme.example"}},
	{"scan status", []string{"scan", "status"}},
	{"scan --once", []string{"scan", "--once"}},
	{"deadletters", []string{"deadletters"}},
	{"deadletters retry", []string{"deadletters", "retry"}},
	{"alerts", []string{"alerts"}},
	{"alerts eval", []string{"alerts", "eval"}},
	{"archive", []string{"archive"}},
	{"archive --dry-run", []string{"archive", "--dry-run"}},
	{"archive --manual", []string{"archive", "--manual", "--id", "1"}},
	{"archive purge", []string{"archive", "purge", "--no-export"}},
	{"restore", []string{"restore", "1"}},
	{"rekey", []string{"rekey"}},
	{"rekey --dry-run", []string{"rekey", "--dry-run"}},
}

// TestReadCommandsNeedAStore runs every read command against a mistyped
// --data folder and an empty one: each fails with the same message and
// leaves no store (nor the folder) behind.
func TestReadCommandsNeedAStore(t *testing.T) {
	for _, folder := range []string{"missing", "empty"} {
		t.Run(folder, func(t *testing.T) {
			for _, rc := range readCommands {
				t.Run(rc.name, func(t *testing.T) {
					c := newCLI(t)
					c.data = filepath.Join(c.data, "typo")
					if folder == "empty" {
						if err := os.Mkdir(c.data, 0o755); err != nil {
							t.Fatal(err)
						}
					}
					t.Chdir(t.TempDir()) // export writes its file here
					out, errs, code := c.run("", rc.args...)
					want := "crawlkeeper: no crawlkeeper store in " + c.data + " (ingest, serve or demo creates one)\n"
					if code != 1 || errs != want || out != "" {
						t.Fatalf("crawlkeeper %s: exit %d, stdout %q, stderr %q; want exit 1 and %q",
							strings.Join(rc.args, " "), code, out, errs, want)
					}
					entries, err := os.ReadDir(c.data)
					switch {
					case folder == "missing" && !os.IsNotExist(err):
						t.Fatalf("the missing folder was created (%v, %v)", entries, err)
					case folder == "empty" && (err != nil || len(entries) > 0):
						t.Fatalf("the empty folder holds %v (%v)", entries, err)
					}
					if _, err := os.Stat("out.jsonl"); !os.IsNotExist(err) {
						t.Fatalf("export created its file without a store (%v)", err)
					}
				})
			}
		})
	}
}

// TestReadCommandsNeedAServerStore points every read command at a server
// database without crawlkeeper's tables: each fails with the message
// naming the (redacted) URL and creates no tables, which the next command
// proves by failing the same way; ingest then creates the store.
func TestReadCommandsNeedAServerStore(t *testing.T) {
	for _, kind := range []string{testdb.Postgres, testdb.MySQL, testdb.MongoDB} {
		t.Run(kind, func(t *testing.T) {
			c := newCLI(t)
			u := testdb.URL(t, kind)
			t.Setenv("CRAWLKEEPER_STORE", u)
			t.Setenv("CRAWLKEEPER_MONITOR", "")
			t.Chdir(t.TempDir())
			for _, rc := range readCommands {
				out, errs, code := c.run("", rc.args...)
				if code != 1 || out != "" || !strings.HasPrefix(errs, "crawlkeeper: no crawlkeeper store in "+kind) ||
					!strings.HasSuffix(errs, " (ingest, serve or demo creates one)\n") {
					t.Fatalf("crawlkeeper %s on an empty %s database: exit %d, stdout %q, stderr %q",
						strings.Join(rc.args, " "), kind, code, out, errs)
				}
			}
			c.ok(`{"title":"Job 1","url":"https://jobs.example/1"}`, "ingest", "-", "--source", "jobs")
			if out := c.ok("", "stats", "--json"); !strings.Contains(out, `"active":1`) {
				t.Fatalf("stats after ingest = %s", out)
			}
		})
	}
}

// TestWriteCommandsCreateTheStore checks the other side: the commands that
// bring data in create the store in a new folder.
func TestWriteCommandsCreateTheStore(t *testing.T) {
	for _, tc := range []struct {
		name, stdin string
		args        []string
	}{
		{"ingest", `{"title":"Job 1","url":"https://jobs.example/1"}`, []string{"ingest", "-", "--source", "jobs"}},
		{"round queue", "acme.example\n", []string{"round", "queue", "--round", "7", "-"}},
		{"round done", "", []string{"round", "done", "--round", "7", "acme.example"}},
		{"round fail", "", []string{"round", "fail", "--round", "7", "acme.example"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCLI(t)
			c.data = filepath.Join(c.data, "new")
			c.ok(tc.stdin, tc.args...)
			c.ok("", "check")
		})
	}
}
