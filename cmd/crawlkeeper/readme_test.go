package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// needsServer matches a command line that names a server (a database, a
// queue, a MongoDB to import from): the tour test runs on the embedded
// store only.
var needsServer = regexp.MustCompile(`--(store|queue|from|monitor)[ =]\S+://`)

// tourStart is the clock of the tour's first command; each later command
// runs a minute after the one before, so the times the README shows are
// the times the test sees.
var tourStart = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// tourNormal rewrites what varies from run to run in the tour's outputs,
// in the README's text and in the program's output alike: elapsed times.
var tourNormal = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\bin \d+\.\d+s\b`), "in 0.00s"},
}

// tourStep is one command of the README, with the output it shows.
type tourStep struct {
	line string // the command line as written
	// compare is true for a console block's command, whose following
	// lines are its output; an sh block's commands only have to succeed.
	compare bool
	want    []string
	// first and end delimit want's lines in the README (0-based, end
	// exclusive), for -update.
	first, end int
}

// TestReadmeTour runs every crawlkeeper command of README.md, as written
// and in order, from a copy of the repository's examples/ folder on a
// fresh embedded store, and compares the output of each command of a
// console block (the lines after "$ crawlkeeper ...") with what the
// program prints, stdout and stderr as a terminal shows them. In the
// README, a line "…" stands for any number of lines and a line ending in
// "…" for any line that starts with the rest, so long outputs can be
// trimmed. Commands that need a server or run until stopped are left out
// of the run. With -update, outputs that do not match are replaced with
// the program's.
func TestReadmeTour(t *testing.T) {
	const readmePath = "../../README.md"
	readme, err := os.ReadFile(readmePath)
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
	lines := strings.Split(string(readme), "\n")
	steps := tourSteps(lines)
	type fix struct {
		first, end int
		got        []string
	}
	var fixes []fix
	ran, compared := 0, 0
	for _, st := range steps {
		if needsServer.MatchString(st.line) {
			continue
		}
		var out bytes.Buffer
		skip := false
		for _, part := range strings.Split(st.line, " && ") {
			args, stdin := shellWords(t, part)
			switch {
			case len(args) > 0 && args[0] == "crawlkeeper":
				args = args[1:]
			case len(args) > 2 && args[0] == "go" && args[1] == "run" && args[2] == "./cmd/crawlkeeper":
				args = args[3:]
			default:
				t.Fatalf("README line %q: %q is not a crawlkeeper command", st.line, part)
			}
			if runsUntilStopped(args) {
				skip = true
				break
			}
			in := []byte{}
			if stdin != "" {
				if in, err = os.ReadFile(stdin); err != nil {
					t.Errorf("README line %q: %v", st.line, err)
					continue
				}
			}
			now := tourStart.Add(time.Duration(ran) * time.Minute)
			a := &app{stdin: bytes.NewReader(in), stdout: &out, stderr: &out, baseClock: func() time.Time { return now }}
			if code := run(context.Background(), a, args); code != 0 {
				t.Errorf("README line %q: exit %d\n%s", st.line, code, out.String())
			}
			ran++
		}
		if skip || !st.compare {
			continue
		}
		compared++
		got := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
		if out.Len() == 0 {
			got = nil
		}
		if !matchLines(normalTour(st.want), normalTour(got)) {
			if *update {
				fixes = append(fixes, fix{st.first, st.end, got})
				continue
			}
			t.Errorf("README: the output shown for\n  $ %s\nis not what it prints (go test ./cmd/crawlkeeper -run TestReadmeTour -update rewrites it). README:\n%s\nprogram:\n%s",
				st.line, strings.Join(st.want, "\n"), strings.Join(got, "\n"))
		}
	}
	// The extraction itself must not break silently.
	if ran < 15 || compared < 12 {
		t.Errorf("ran %d commands from README.md and compared the output of %d; the tour has more", ran, compared)
	}
	if len(fixes) > 0 {
		for i := len(fixes) - 1; i >= 0; i-- {
			f := fixes[i]
			lines = append(lines[:f.first], append(f.got, lines[f.end:]...)...)
		}
		if err := os.WriteFile(filepath.Join(root, "README.md"), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the output of %d commands in README.md", len(fixes))
	}
}

// runsUntilStopped reports whether a command serves until it is
// interrupted; the other tests start those in process.
func runsUntilStopped(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "serve", "demo":
		return true
	case "scan":
		return !strings.Contains(strings.Join(args, " "), "--once") && !strings.Contains(strings.Join(args, " "), "status")
	}
	return false
}

func normalTour(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		for _, n := range tourNormal {
			l = n.re.ReplaceAllString(l, n.with)
		}
		out[i] = l
	}
	return out
}

// matchLines reports whether got matches want, where a want line "…"
// matches any number of lines and a want line ending in "…" any line
// starting with the rest.
func matchLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "…" {
		for i := 0; i <= len(got); i++ {
			if matchLines(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	if len(got) == 0 {
		return false
	}
	w := want[0]
	if prefix, ok := strings.CutSuffix(w, "…"); ok {
		if !strings.HasPrefix(got[0], prefix) {
			return false
		}
	} else if w != got[0] {
		return false
	}
	return matchLines(want[1:], got[1:])
}

// tourSteps returns the crawlkeeper commands of the README's sh and
// console blocks, in order: an sh block's lines that run crawlkeeper
// (directly or with go run), without their comments; a console block's
// "$ " lines, each with the lines after it as its output.
func tourSteps(lines []string) []tourStep {
	var out []tourStep
	block := ""
	isTour := func(cmd string) bool {
		return strings.HasPrefix(cmd, "crawlkeeper ") || strings.HasPrefix(cmd, "go run ./cmd/crawlkeeper ")
	}
	var cur *tourStep
	closeStep := func(end int) {
		if cur != nil {
			cur.end = end
			cur.want = append([]string(nil), lines[cur.first:end]...)
			out = append(out, *cur)
			cur = nil
		}
	}
	for i, line := range lines {
		switch {
		case block == "" && strings.HasPrefix(line, "```"):
			block = strings.TrimPrefix(line, "```")
			continue
		case block != "" && line == "```":
			closeStep(i)
			block = ""
			continue
		}
		switch block {
		case "sh":
			cmd := strings.TrimSpace(stripComment(line))
			if isTour(cmd) {
				out = append(out, tourStep{line: cmd})
			}
		case "console":
			if cmd, ok := strings.CutPrefix(line, "$ "); ok {
				closeStep(i)
				if isTour(cmd) {
					cur = &tourStep{line: cmd, compare: true, first: i + 1}
				}
			}
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

// TestMatchLines checks the tour's trimming rules, so that a README
// output cannot pass by a fault of the matcher.
func TestMatchLines(t *testing.T) {
	for _, c := range []struct {
		want, got string
		ok        bool
	}{
		{"a\nb", "a\nb", true},
		{"a\nb", "a\nc", false},
		{"a", "a\nb", false},
		{"a\n…", "a\nb\nc", true},
		{"a\n…\nc", "a\nb\nb\nc", true},
		{"a\n…\nc", "a\nb\nd", false},
		{"…", "", true},
		{"ab…", "abc", true},
		{"ab…", "xbc", false},
		{"", "", true},
		{"", "a", false},
	} {
		split := func(s string) []string {
			if s == "" {
				return nil
			}
			return strings.Split(s, "\n")
		}
		if got := matchLines(split(c.want), split(c.got)); got != c.ok {
			t.Errorf("matchLines(%q, %q) = %v", c.want, c.got, got)
		}
	}
	if got := fmt.Sprint(normalTour([]string{"would archive 3 of 3 selected records in 0.02s"})); got != "[would archive 3 of 3 selected records in 0.00s]" {
		t.Errorf("normalTour: %s", got)
	}
}
