// Command testrun is the README's test command:
//
//	go run ./internal/testrun [-long] [go test flags] [packages]
//
// It runs `go test -json` (on ./... unless packages are given; a package
// is an argument that starts with "." such as ./sqlite/...), prints one
// line per package as it finishes and the full output of every failed
// test, and ends with a summary: which packages ran, how many tests passed
// and failed, the slowest packages, and one line per environment variable
// that would have turned skipped tests on (the tests that need a database
// server, Redis, NATS or a browser, and the long tests behind
// CRAWLKEEPER_LONG=1), with the reason the tests gave. Every other
// argument goes to go test as it is (-race, -count=1, -run, -v, -short).
// The exit status is go test's.
//
// With -long it runs only the long tests, those whose function calls
// longtest.Skip (package internal/longtest), found by reading the test
// files, with CRAWLKEEPER_LONG=1: the torture, crash and kill tests, the
// load test, the benchmark runs and the big-data tests that the default
// run skips to finish in minutes. `go run ./internal/testrun -race` then
// `go run ./internal/testrun -race -long` is everything CI runs in Go
// tests with the race detector.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs go test with args and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	long := false
	var rest []string
	for _, a := range args {
		if a == "-long" || a == "--long" {
			long = true
		} else {
			rest = append(rest, a)
		}
	}
	cmd := exec.Command("go")
	if long {
		// Only the long tests, with the switch that turns them on, from
		// the module root.
		root, wd, err := moduleRoot()
		if err == nil {
			rest, err = longArgs(root, wd, rest)
		}
		if err != nil {
			fmt.Fprintf(stderr, "testrun: -long: %v\n", err)
			return 2
		}
		cmd.Dir = root
		cmd.Env = append(os.Environ(), longtestEnv+"=1")
		fmt.Fprintf(stdout, "%s=1 ", longtestEnv)
	}
	goArgs := testArgs(rest)
	fmt.Fprintf(stdout, "go %s\n", strings.Join(goArgs, " "))
	cmd.Args = append(cmd.Args, goArgs...)
	cmd.Stderr = stderr
	cmd.Stdin = os.Stdin
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "testrun: %v\n", err)
		return 2
	}
	// Ctrl-C reaches go test too (same process group): it stops, and the
	// summary still says what finished.
	signal.Notify(make(chan os.Signal, 1), os.Interrupt)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "testrun: %v\n", err)
		return 2
	}
	r := newReport(modulePath(), verbose(args), stdout)
	if err := r.read(out); err != nil {
		fmt.Fprintf(stderr, "testrun: reading go test output: %v\n", err)
	}
	werr := cmd.Wait()
	r.summary(time.Since(start))
	var ee *exec.ExitError
	switch {
	case werr == nil && r.failed() > 0:
		return 1
	case werr == nil:
		return 0
	case errors.As(werr, &ee) && ee.ExitCode() > 0:
		return ee.ExitCode()
	}
	fmt.Fprintf(stderr, "testrun: go test: %v\n", werr)
	return 2
}

// testArgs builds go test's arguments: -json first, then args, then ./...
// when args name no package.
func testArgs(args []string) []string {
	out := append([]string{"test", "-json"}, args...)
	for _, a := range args {
		if strings.HasPrefix(a, ".") {
			return out
		}
	}
	return append(out, "./...")
}

// verbose reports whether args ask for every test's output (-v).
func verbose(args []string) bool {
	for _, a := range args {
		switch a {
		case "-v", "--v", "-v=true", "--v=true":
			return true
		}
	}
	return false
}

// longtestEnv is internal/longtest's switch (package longtest imports
// testing, which a command should not link).
const longtestEnv = "CRAWLKEEPER_LONG"

// moduleRoot returns the main module's folder and the working folder.
func moduleRoot() (root, wd string, err error) {
	wd, err = os.Getwd()
	if err != nil {
		return "", "", err
	}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", "", fmt.Errorf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", "", fmt.Errorf("not in a Go module: run it from the crawlkeeper folder")
	}
	return filepath.Dir(mod), wd, nil
}

// modulePath returns the main module's path, trimmed from package names
// in the report; "" when go cannot tell.
func modulePath() string {
	out, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}

// event is one line of `go test -json` (cmd/test2json), with the build
// events of Go 1.24 and later.
type event struct {
	Action      string
	Package     string
	ImportPath  string
	Test        string
	Elapsed     float64
	Output      string
	FailedBuild string
}

type test struct {
	name   string
	action string   // pass, fail or skip once done
	output []string // kept for failed and skipped tests
}

type pkg struct {
	name    string
	action  string // pass, fail or skip (no test files)
	elapsed float64
	build   bool // failed to build
	output  []string
	tests   map[string]*test
	order   []string
}

type report struct {
	module  string
	verbose bool
	w       io.Writer
	pkgs    map[string]*pkg
	order   []string
}

func newReport(module string, verbose bool, w io.Writer) *report {
	return &report{module: module, verbose: verbose, w: w, pkgs: map[string]*pkg{}}
}

// short names a package without the module path.
func (r *report) short(name string) string {
	switch {
	case r.module == "":
		return name
	case name == r.module:
		return "."
	}
	return strings.TrimPrefix(name, r.module+"/")
}

func (r *report) pkg(name string) *pkg {
	p := r.pkgs[name]
	if p == nil {
		p = &pkg{name: name, tests: map[string]*test{}}
		r.pkgs[name] = p
		r.order = append(r.order, name)
	}
	return p
}

// read consumes go test's JSON events. A line that is not JSON (go test
// prints some errors that way) is passed through.
func (r *report) read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(r.w, "%s\n", line)
			continue
		}
		r.event(e)
	}
	return sc.Err()
}

func (r *report) event(e event) {
	switch e.Action {
	case "build-output":
		// Compiler errors: shown at once, as go test shows them.
		fmt.Fprint(r.w, e.Output)
		return
	case "build-fail":
		return
	}
	if e.Package == "" {
		return
	}
	p := r.pkg(e.Package)
	if e.Test == "" {
		switch e.Action {
		case "output":
			if r.verbose {
				fmt.Fprint(r.w, e.Output)
			}
			p.output = append(p.output, e.Output)
		case "pass", "fail", "skip":
			p.action, p.elapsed, p.build = e.Action, e.Elapsed, e.FailedBuild != ""
			r.finished(p)
		}
		return
	}
	t := p.tests[e.Test]
	if t == nil {
		t = &test{name: e.Test}
		p.tests[e.Test] = t
		p.order = append(p.order, e.Test)
	}
	switch e.Action {
	case "output":
		if r.verbose {
			fmt.Fprint(r.w, e.Output)
		}
		t.output = append(t.output, e.Output)
	case "pass":
		t.action, t.output = e.Action, nil
	case "fail", "skip":
		t.action = e.Action
	}
}

// counts returns a package's leaf tests (subtests count, the tests that
// only group them do not) by result.
func (p *pkg) counts() (passed, failed, skipped int) {
	names := make([]string, 0, len(p.tests))
	for n := range p.tests {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		if i+1 < len(names) && strings.HasPrefix(names[i+1], n+"/") {
			// A parent: failed when a subtest failed, which counts
			// already; a skip or a failure of its own before its
			// subtests counts here.
			if t := p.tests[n]; t.action == "skip" || (t.action == "fail" && !anyFailed(p, n)) {
				if t.action == "skip" {
					skipped++
				} else {
					failed++
				}
			}
			continue
		}
		switch p.tests[n].action {
		case "pass":
			passed++
		case "fail":
			failed++
		case "skip":
			skipped++
		}
	}
	return passed, failed, skipped
}

func anyFailed(p *pkg, parent string) bool {
	for n, t := range p.tests {
		if strings.HasPrefix(n, parent+"/") && t.action == "fail" {
			return true
		}
	}
	return false
}

// finished prints a package's line and, when it failed, the output of its
// failed tests and its own output (panics, timeouts).
func (r *report) finished(p *pkg) {
	name := r.short(p.name)
	passed, failed, skipped := p.counts()
	switch {
	case p.action == "skip" && len(p.tests) == 0:
		return // no test files: listed in the summary
	case p.build:
		fmt.Fprintf(r.w, "FAIL  %-28s build failed\n", name)
		return
	}
	status := "ok"
	if p.action == "fail" {
		status = "FAIL"
	}
	line := fmt.Sprintf("%-4s  %-28s %7.1fs  %d passed", status, name, p.elapsed, passed)
	if failed > 0 {
		line += fmt.Sprintf(", %d failed", failed)
	}
	if skipped > 0 {
		vars := map[string]bool{}
		var names []string
		for _, t := range p.tests {
			if t.action == "skip" {
				if v := skipVar(skipReason(t.output)); v != "" && !vars[v] {
					vars[v] = true
					names = append(names, v)
				}
			}
		}
		sort.Strings(names)
		line += fmt.Sprintf(", %d skipped", skipped)
		if len(names) > 0 {
			line += " (" + strings.Join(names, ", ") + ")"
		}
	}
	fmt.Fprintln(r.w, line)
	if p.action != "fail" || r.verbose {
		return
	}
	for _, n := range p.order {
		if t := p.tests[n]; t.action == "fail" {
			fmt.Fprint(r.w, strings.Join(t.output, ""))
		}
	}
	fmt.Fprint(r.w, strings.Join(p.output, ""))
}

// The environment variable a skip message names: the one after "set",
// else the project's first CRAWLKEEPER_* variable, else any NAME=value.
var (
	setVar   = regexp.MustCompile(`\bset ([A-Z][A-Z0-9_]{2,})\b`)
	varName  = regexp.MustCompile(`\bCRAWLKEEPER_[A-Z0-9_]+`)
	assigned = regexp.MustCompile(`\b([A-Z][A-Z0-9_]{2,})=`)
)

// skipVar returns the environment variable a skip message names, "" when
// it names none.
func skipVar(reason string) string {
	if m := setVar.FindStringSubmatch(reason); m != nil {
		return m[1]
	}
	if v := varName.FindString(reason); v != "" {
		return v
	}
	if m := assigned.FindStringSubmatch(reason); m != nil {
		return m[1]
	}
	return ""
}

// fileLine is the "name_test.go:12: " that t.Skip puts before a message.
var fileLine = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: `)

// skipReason returns the message a skipped test gave: its output without
// the === and --- lines and the file:line prefix.
func skipReason(output []string) string {
	var parts []string
	for _, l := range output {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		parts = append(parts, strings.TrimSpace(fileLine.ReplaceAllString(l, "")))
	}
	return strings.Join(parts, " ")
}

func (r *report) failed() int {
	n := 0
	for _, p := range r.pkgs {
		if p.action == "fail" {
			n++
		}
	}
	return n
}

// skipGroup is the skipped tests one variable (or one message naming
// none) accounts for.
type skipGroup struct {
	key      string // the variable, or the message
	isVar    bool
	tests    int
	pkgs     map[string]bool
	messages map[string]int
}

func (r *report) summary(took time.Duration) {
	var ran, noTests, allSkipped []string
	var failedTests []string
	passed, failed, skipped := 0, 0, 0
	type timing struct {
		name    string
		elapsed float64
	}
	var times []timing
	groups := map[string]*skipGroup{}
	for _, name := range r.order {
		p := r.pkgs[name]
		short := r.short(name)
		if p.action == "" {
			continue // still running when go test stopped
		}
		if len(p.tests) == 0 && !p.build {
			if p.action == "skip" {
				noTests = append(noTests, short)
			}
			continue
		}
		ps, pf, sk := p.counts()
		passed, failed, skipped = passed+ps, failed+pf, skipped+sk
		if ps+pf > 0 || p.build {
			ran = append(ran, short)
			times = append(times, timing{short, p.elapsed})
		} else {
			allSkipped = append(allSkipped, short)
		}
		for _, n := range p.order {
			t := p.tests[n]
			switch t.action {
			case "fail":
				if !anyFailed(p, n) {
					failedTests = append(failedTests, n+" ("+short+")")
				}
			case "skip":
				reason := skipReason(t.output)
				key := skipVar(reason)
				if key == "" {
					key = reason
				}
				g := groups[key]
				if g == nil {
					g = &skipGroup{key: key, isVar: key != reason, pkgs: map[string]bool{}, messages: map[string]int{}}
					groups[key] = g
				}
				g.tests++
				g.pkgs[short] = true
				g.messages[reason]++
			}
		}
	}
	w := r.w
	fmt.Fprintf(w, "\n==== summary (%s)\n", took.Round(time.Second))
	fmt.Fprintf(w, "ran:      %s, %s passed, %d failed\n", plural(len(ran), "package"), plural(passed, "test"), failed)
	sort.SliceStable(times, func(i, j int) bool { return times[i].elapsed > times[j].elapsed })
	if len(times) > 5 {
		times = times[:5]
	}
	if len(times) > 0 {
		var s []string
		for _, t := range times {
			s = append(s, fmt.Sprintf("%s %.0fs", t.name, t.elapsed))
		}
		fmt.Fprintf(w, "slowest:  %s\n", strings.Join(s, ", "))
	}
	if len(allSkipped) > 0 {
		fmt.Fprintf(w, "skipped:  every test of %s\n", strings.Join(allSkipped, ", "))
	}
	if len(noTests) > 0 {
		fmt.Fprintf(w, "no tests: %s\n", strings.Join(noTests, ", "))
	}
	if skipped > 0 {
		fmt.Fprintf(w, "%s skipped; set the variable to run them:\n", plural(skipped, "test"))
		var vars, others []*skipGroup
		for _, g := range groups {
			if g.isVar {
				vars = append(vars, g)
			} else {
				others = append(others, g)
			}
		}
		sort.Slice(vars, func(i, j int) bool { return vars[i].key < vars[j].key })
		sort.Slice(others, func(i, j int) bool { return others[i].key < others[j].key })
		for _, g := range vars {
			fmt.Fprintf(w, "  %-30s %s: %s\n", g.key, where(g), mostCommon(g.messages))
		}
		for _, g := range others {
			reason := g.key
			if reason == "" {
				reason = "(no reason given)"
			}
			fmt.Fprintf(w, "  %-30s %s: %s\n", "(no variable)", where(g), reason)
		}
	}
	if len(failedTests) > 0 {
		fmt.Fprintf(w, "FAILED:   %s\n", strings.Join(failedTests, ", "))
	}
	for _, name := range r.order {
		if p := r.pkgs[name]; (p.action == "fail" && len(p.tests) == 0) || p.build {
			fmt.Fprintf(w, "FAILED:   package %s (see its output above)\n", r.short(name))
		}
	}
}

// where says how many tests a group holds and in which packages.
func where(g *skipGroup) string {
	names := make([]string, 0, len(g.pkgs))
	for n := range g.pkgs {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) > 4 {
		return fmt.Sprintf("%s in %s and %d more packages", plural(g.tests, "test"), strings.Join(names[:3], ", "), len(names)-3)
	}
	return fmt.Sprintf("%s in %s", plural(g.tests, "test"), strings.Join(names, ", "))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// mostCommon returns the message given most often (the first in sorted
// order on a tie).
func mostCommon(m map[string]int) string {
	best, n := "", -1
	for msg, c := range m {
		if c > n || (c == n && msg < best) {
			best, n = msg, c
		}
	}
	return best
}
