package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper/dates"
)

// startupChildEnv names the store folder TestStartupChild reads; set, it
// makes that test run the commands in this fresh process.
const startupChildEnv = "CRAWLKEEPER_STARTUP_CHILD"

// TestStartupBuildsNoDateTables runs commands that read no date in a
// fresh process (this test binary, running only TestStartupChild) and
// checks that neither package initialisation nor those commands built a
// date table: Go runs the init of every linked package, so a table built
// there costs every command. Reading a date then builds the tables, which
// shows the check can see them.
func TestStartupBuildsNoDateTables(t *testing.T) {
	c := newCLI(t)
	c.ok(`{"title":"Alpha role","url":"https://a.example/1","deadline":"15 May 2026"}`+"\n"+
		`{"title":"Beta role","url":"https://a.example/2","deadline":"in 3 days"}`+"\n",
		"ingest", "--source", "a", "--now", "2026-05-01T00:00:00Z", "-")
	cmd := exec.Command(os.Args[0], "-test.run=^TestStartupChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), startupChildEnv+"="+c.data)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child process: %v\n%s", err, out)
	}
	loaded := map[string]string{}
	var steps []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "date tables after ")
		step, tables, ok2 := strings.Cut(rest, ": ")
		if ok && ok2 {
			steps = append(steps, step)
			loaded[step] = tables
		}
	}
	if want := "init help version stats records search dates-iso dates-text dates-library"; strings.Join(steps, " ") != want {
		t.Fatalf("child reported steps %q, want %q\n%s", steps, want, out)
	}
	for _, step := range []string{"init", "help", "version", "stats", "records", "search"} {
		if loaded[step] != "[]" {
			t.Errorf("after %s the process had built date tables %s; build them on first use (sync.OnceValue), not in init", step, loaded[step])
		}
	}
	// A machine format reads without tables; text needs the words; what
	// only the library reads builds its tables too.
	if !strings.Contains(loaded["dates-text"], "words") || strings.Contains(loaded["dates-text"], "go-dateparser") {
		t.Errorf("after reading text: %s, want the word tables without the library", loaded["dates-text"])
	}
	if !strings.Contains(loaded["dates-library"], "go-dateparser") {
		t.Errorf("after reading Thai: %s, want the library loaded", loaded["dates-library"])
	}
}

// TestStartupChild is the fresh process of TestStartupBuildsNoDateTables.
func TestStartupChild(t *testing.T) {
	data := os.Getenv(startupChildEnv)
	if data == "" {
		t.Skip("runs in the fresh process TestStartupBuildsNoDateTables starts (" + startupChildEnv + ")")
	}
	report := func(step string) { fmt.Printf("date tables after %s: %q\n", step, dates.Loaded()) }
	report("init")
	for _, step := range []struct {
		name string
		args []string
	}{
		{"help", []string{"help"}},
		{"version", []string{"version"}},
		{"stats", []string{"stats", "--data", data}},
		{"records", []string{"records", "--data", data}},
		{"search", []string{"search", "alpha", "--data", data}},
		{"dates-iso", []string{"dates", "2026-05-15T10:00:00Z"}},
		{"dates-text", []string{"dates", "15 May 2026"}},
		{"dates-library", []string{"dates", "--lang", "th", "3 วันที่แล้ว"}},
	} {
		var out, errb strings.Builder
		if code := Run(context.Background(), step.args, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("crawlkeeper %s: exit %s\n%s%s", strings.Join(step.args, " "), strconv.Itoa(code), out.String(), errb.String())
		}
		report(step.name)
	}
}

// maxInitBytes bounds what any one package may allocate in its init.
// Before tables moved to first use, go-dateparser's locale data took 99 MB
// and this module's date and benchmark tables 4.6 MB each; what remains
// is below 0.5 MB per package.
const maxInitBytes = 1 << 20

// TestInitAllocations runs the built binary with GODEBUG=inittrace=1 and
// checks that no package, ours or a dependency, allocates more than
// maxInitBytes in its init: a table built there costs every command.
// Allocations, unlike times, do not depend on the machine's load.
func TestInitAllocations(t *testing.T) {
	bin := buildBinary(t)
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("crawlkeeper version: %v\n%s", err, out)
	}
	inits := 0
	for _, line := range strings.Split(string(out), "\n") {
		// init PKG @T ms, C ms clock, B bytes, A allocs
		f := strings.Fields(line)
		if len(f) < 11 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		inits++
		b, err := strconv.ParseInt(f[7], 10, 64)
		if err != nil {
			t.Fatalf("inittrace line %q: %v", line, err)
		}
		if b > maxInitBytes {
			t.Errorf("package %s allocates %d bytes in init (%s ms): build its tables on first use", f[1], b, f[4])
		}
	}
	if inits < 50 {
		t.Fatalf("read %d init lines from GODEBUG=inittrace=1, want every linked package's:\n%s", inits, out)
	}
}
