package main

import (
	"bytes"
	"context"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper/config"
)

var update = flag.Bool("update", false, "rewrite docs/CLI.md, docs/CONFIG.md and the README tour's outputs from the program")

// TestReferenceDocs fails when docs/CLI.md or docs/CONFIG.md is not what
// `crawlkeeper help --markdown` and `help config --markdown` write now.
func TestReferenceDocs(t *testing.T) {
	for _, c := range []struct {
		file, regenerate string
		args             []string
	}{
		{"../../docs/CLI.md", cliDocCommand, []string{"help", "--markdown"}},
		{"../../docs/CONFIG.md", configDocCommand, []string{"help", "config", "--markdown"}},
	} {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			newCLI(t)
			var out, errb bytes.Buffer
			if code := Run(context.Background(), c.args, strings.NewReader(""), &out, &errb); code != 0 {
				t.Fatalf("crawlkeeper %s: exit %d: %s", strings.Join(c.args, " "), code, errb.String())
			}
			if *update {
				if err := os.WriteFile(c.file, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := os.ReadFile(c.file)
			if err != nil {
				t.Fatalf("%v: run `%s` from the repository root", err, c.regenerate)
			}
			if !bytes.Equal(got, out.Bytes()) {
				t.Errorf("%s is stale: run `%s` from the repository root (or go test ./cmd/crawlkeeper -run TestReferenceDocs -update)", filepath.Base(c.file), c.regenerate)
			}
		})
	}
}

// TestReferenceDocsIgnoreEnvironment checks that the reference does not
// take the defaults of the machine it was made on.
func TestReferenceDocsIgnoreEnvironment(t *testing.T) {
	newCLI(t)
	var plain bytes.Buffer
	if err := writeCLIMarkdown(context.Background(), &plain); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CRAWLKEEPER_DATA", "/elsewhere")
	t.Setenv("CRAWLKEEPER_STORE", "postgres://db/x")
	var env bytes.Buffer
	if err := writeCLIMarkdown(context.Background(), &env); err != nil {
		t.Fatal(err)
	}
	if plain.String() != env.String() {
		t.Error("help --markdown changes with CRAWLKEEPER_DATA and CRAWLKEEPER_STORE")
	}
	if !strings.Contains(plain.String(), "| `--data folder` | `./crawlkeeper-data` |") {
		t.Error("CLI.md does not give --data's built-in default")
	}
}

// TestReferenceListsEverySubcommand checks that every subcommand with a
// flag set of its own is in the reference.
func TestReferenceListsEverySubcommand(t *testing.T) {
	got := slices.Sorted(slices.Values(commands["round"].subs))
	want := slices.Sorted(maps.Keys(roundSubs))
	if !slices.Equal(got, want) {
		t.Errorf("round's subs %v, its subcommands %v", got, want)
	}
	docs, err := describeCommands(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if d.usage == "" {
			t.Errorf("%s: no usage", d.name)
		}
		for _, s := range d.subs {
			if s.usage == "" || !strings.Contains(s.usage, s.name) {
				t.Errorf("%s: usage %q does not name it", s.name, s.usage)
			}
		}
	}
}

// TestHelpConfig checks that `crawlkeeper help config` prints the
// configuration reference: every key, the example, and nothing on stderr.
func TestHelpConfig(t *testing.T) {
	newCLI(t)
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), args, strings.NewReader(""), &out, &errb)
		return out.String(), errb.String(), code
	}
	out, errs, code := run("help", "config")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, k := range config.Reference() {
		if !strings.Contains(out, "\n  "+k.Path+": ") && !strings.Contains(out, "\n"+k.Path+"\n") {
			t.Errorf("help config does not list %s", k.Path)
		}
	}
	if !strings.Contains(out, config.Example) {
		t.Error("help config does not end with the example")
	}
	if _, _, code := run("help", "config", "--nonsense"); code != 2 {
		t.Errorf("help config --nonsense: exit %d, want 2", code)
	}
}
