package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// needsServer matches a command line that names a server (a database, a
// queue, a MongoDB to import from): the tour test runs on the embedded
// store only.
var needsServer = regexp.MustCompile(`--(store|queue|from|monitor)[ =]\S+://`)

// runsUntilStopped lists the README's commands that serve until they are
// interrupted; the other tests start them in process.
var runsUntilStopped = map[string]bool{
	"go run ./cmd/crawlkeeper demo": true,
}

// TestReadmeTour runs every crawlkeeper command of README.md's shell
// blocks, as written and in order, from a copy of the repository's
// examples/ folder on a fresh embedded store: a command or an input file
// that the README names and that does not work fails the test, so the
// README cannot drift from the program. Commands that need a server or
// run until stopped are left out.
func TestReadmeTour(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	newCLI(t) // clears the environment variables that would pick another store
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "examples"), os.DirFS(filepath.Join(root, "examples"))); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	ran := 0
	for _, line := range tourCommands(string(readme)) {
		if needsServer.MatchString(line) || runsUntilStopped[line] {
			continue
		}
		for _, part := range strings.Split(line, " && ") {
			args, stdin := shellWords(t, part)
			switch {
			case len(args) > 0 && args[0] == "crawlkeeper":
				args = args[1:]
			case len(args) > 2 && args[0] == "go" && args[1] == "run" && args[2] == "./cmd/crawlkeeper":
				args = args[3:]
			default:
				t.Fatalf("README line %q: %q is not a crawlkeeper command", line, part)
			}
			in := []byte{}
			if stdin != "" {
				if in, err = os.ReadFile(stdin); err != nil {
					t.Errorf("README line %q: %v", line, err)
					continue
				}
			}
			var out, errb bytes.Buffer
			if code := Run(context.Background(), args, bytes.NewReader(in), &out, &errb); code != 0 {
				t.Errorf("README line %q: exit %d\nstdout: %s\nstderr: %s", line, code, out.String(), errb.String())
			}
			ran++
		}
	}
	// The extraction itself must not break silently.
	if ran < 30 {
		t.Errorf("ran %d commands from README.md; the tour has more", ran)
	}
}

// tourCommands returns the lines of README.md's sh blocks that run
// crawlkeeper (directly or with go run), without their comments.
func tourCommands(readme string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(readme, "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			in = true
			continue
		case strings.HasPrefix(line, "```"):
			in = false
			continue
		}
		if !in {
			continue
		}
		line = strings.TrimSpace(stripComment(line))
		if strings.HasPrefix(line, "crawlkeeper ") || strings.HasPrefix(line, "go run ./cmd/crawlkeeper ") {
			out = append(out, line)
		}
	}
	return out
}

// stripComment cuts a shell comment: a # at the start of a word, outside
// quotes.
func stripComment(line string) string {
	var quote rune
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return line[:i]
		}
	}
	return line
}

// shellWords splits a simple shell command into words (single and double
// quotes, no escapes or expansions) and returns the file of a "< FILE"
// redirection separately.
func shellWords(t *testing.T, s string) (words []string, stdin string) {
	t.Helper()
	var cur strings.Builder
	var quote rune
	inWord, redirect := false, false
	flush := func() {
		if !inWord {
			return
		}
		if redirect {
			stdin, redirect = cur.String(), false
		} else {
			words = append(words, cur.String())
		}
		cur.Reset()
		inWord = false
	}
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			flush()
		case r == '<' && !inWord:
			redirect = true
		case strings.ContainsRune("|>;&$`\\", r):
			t.Fatalf("README command %q uses shell syntax the tour test does not run", s)
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		t.Fatalf("README command %q: unclosed quote", s)
	}
	flush()
	return words, stdin
}
