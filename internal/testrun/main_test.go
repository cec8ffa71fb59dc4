package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// stream encodes events as go test -json prints them.
func stream(t *testing.T, events ...event) string {
	t.Helper()
	var b strings.Builder
	for _, e := range events {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestReport(t *testing.T) {
	const m = "example.com/m"
	in := stream(t,
		event{Action: "run", Package: m + "/a", Test: "TestA"},
		event{Action: "pass", Package: m + "/a", Test: "TestA"},
		event{Action: "run", Package: m + "/a", Test: "TestB"},
		event{Action: "output", Package: m + "/a", Test: "TestB", Output: "=== RUN   TestB\n"},
		event{Action: "output", Package: m + "/a", Test: "TestB", Output: "    a_test.go:12: set CRAWLKEEPER_TEST_REDIS (for example redis://127.0.0.1:6379/0) to run the Redis tests\n"},
		event{Action: "output", Package: m + "/a", Test: "TestB", Output: "--- SKIP: TestB (0.00s)\n"},
		event{Action: "skip", Package: m + "/a", Test: "TestB"},
		event{Action: "run", Package: m + "/a", Test: "TestC"},
		event{Action: "pass", Package: m + "/a", Test: "TestC/x"},
		event{Action: "output", Package: m + "/a", Test: "TestC/y", Output: "    a_test.go:40: long test (kills processes): set CRAWLKEEPER_LONG=1 to run it (.ci/run does)\n"},
		event{Action: "skip", Package: m + "/a", Test: "TestC/y"},
		event{Action: "pass", Package: m + "/a", Test: "TestC"},
		event{Action: "output", Package: m + "/a", Output: "ok  \texample.com/m/a\t1.5s\n"},
		event{Action: "pass", Package: m + "/a", Elapsed: 1.5},
		event{Action: "output", Package: m + "/b", Test: "TestD", Output: "    b_test.go:3: boom\n"},
		event{Action: "fail", Package: m + "/b", Test: "TestD"},
		event{Action: "output", Package: m + "/b", Output: "FAIL\texample.com/m/b\t0.2s\n"},
		event{Action: "fail", Package: m + "/b", Elapsed: 0.2},
		event{Action: "output", Package: m + "/c", Output: "?   \texample.com/m/c\t[no test files]\n"},
		event{Action: "skip", Package: m + "/c"},
		event{Action: "output", Package: m, Test: "TestE", Output: "    e_test.go:9: needs a kernel with io_uring\n"},
		event{Action: "skip", Package: m, Test: "TestE"},
		event{Action: "skip", Package: m, Elapsed: 0.1},
	)
	var out bytes.Buffer
	r := newReport(m, false, &out)
	if err := r.read(strings.NewReader(in + "go: downloading example.com/x v1.0.0\n")); err != nil {
		t.Fatal(err)
	}
	r.summary(90 * time.Second)
	// Columns are padded with spaces: compare with single spaces.
	spaces := regexp.MustCompile(` +`)
	got := spaces.ReplaceAllString(out.String(), " ")
	for _, want := range []string{
		"go: downloading example.com/x v1.0.0\n",
		"ok    a                               1.5s  2 passed, 2 skipped (CRAWLKEEPER_LONG, CRAWLKEEPER_TEST_REDIS)\n",
		"FAIL  b                               0.2s  0 passed, 1 failed\n    b_test.go:3: boom\nFAIL\texample.com/m/b\t0.2s\n",
		"==== summary (1m30s)\n",
		"ran:      2 packages, 2 tests passed, 1 failed\n",
		"slowest:  a 2s, b 0s\n",
		"skipped:  every test of .\n",
		"no tests: c\n",
		"3 tests skipped; set the variable to run them:\n" +
			"  CRAWLKEEPER_LONG               1 test in a: long test (kills processes): set CRAWLKEEPER_LONG=1 to run it (.ci/run does)\n" +
			"  CRAWLKEEPER_TEST_REDIS         1 test in a: set CRAWLKEEPER_TEST_REDIS (for example redis://127.0.0.1:6379/0) to run the Redis tests\n" +
			"  (no variable)                  1 test in .: needs a kernel with io_uring\n",
		"FAILED:   TestD (b)\n",
	} {
		if want = spaces.ReplaceAllString(want, " "); !strings.Contains(got, want) {
			t.Errorf("the report lacks %q; it is:\n%s", want, &out)
		}
	}
	if n := r.failed(); n != 1 {
		t.Errorf("failed() = %d, want 1", n)
	}
}

func TestSkipVar(t *testing.T) {
	for _, tc := range []struct{ reason, want string }{
		{"set CRAWLKEEPER_TEST_MONGO to a server URL", "CRAWLKEEPER_TEST_MONGO"},
		{"the server is FerretDB; set CRAWLKEEPER_TEST_MONGO_RACES=1 to run it anyway", "CRAWLKEEPER_TEST_MONGO_RACES"},
		{"set CORPUS_LIBRARY=1 to measure the library alone", "CORPUS_LIBRARY"},
		{"long test (a load of CRAWLKEEPER_LOAD_SECONDS): set CRAWLKEEPER_LONG=1 to run it", "CRAWLKEEPER_LONG"},
		{"400k targets; skipped with -short", ""},
	} {
		if got := skipVar(tc.reason); got != tc.want {
			t.Errorf("skipVar(%q) = %q, want %q", tc.reason, got, tc.want)
		}
	}
}

func TestTestArgs(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{nil, []string{"test", "-json", "./..."}},
		{[]string{"-race", "-count=1"}, []string{"test", "-json", "-race", "-count=1", "./..."}},
		{[]string{"-run", "TestX", "./sqlite/..."}, []string{"test", "-json", "-run", "TestX", "./sqlite/..."}},
	} {
		if got := testArgs(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("testArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFindLongTests reads a module's test files: the tests calling
// longtest.Skip anywhere in their body count, other tests, other
// modules and testdata do not.
func TestFindLongTests(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "go.mod"), "module example.com/m\n")
	write(t, filepath.Join(root, "root_test.go"), `package m
func TestRoot(t *testing.T) { longtest.Skip(t, "big") }
func TestQuick(t *testing.T) {}
`)
	write(t, filepath.Join(root, "x", "x_test.go"), `package x
func TestLong(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	longtest.Skip(t, "kills processes")
}
func FuzzLong(f *testing.F) { longtest.Skip(f, "fuzz") }
func TestSub(t *testing.T) { t.Run("a", func(t *testing.T) { longtest.Skip(t, "sub") }) }
func helper(t *testing.T) { longtest.Skip(t, "not a test") }
`)
	write(t, filepath.Join(root, "x", "x.go"), "package x\nfunc TestNotInATestFile() { longtest.Skip(nil, \"\") }\n")
	write(t, filepath.Join(root, "x", "testdata", "t_test.go"), "package t\nfunc TestData(t *testing.T) { longtest.Skip(t, \"\") }\n")
	write(t, filepath.Join(root, "other", "go.mod"), "module example.com/other\n")
	write(t, filepath.Join(root, "other", "o_test.go"), "package o\nfunc TestOther(t *testing.T) { longtest.Skip(t, \"\") }\n")

	got, err := findLongTests(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []longTest{{".", "TestRoot"}, {"x", "FuzzLong"}, {"x", "TestLong"}, {"x", "TestSub"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("findLongTests = %v, want %v", got, want)
	}

	for _, tc := range []struct {
		wd   string
		args []string
		want []string
	}{
		{root, []string{"-race"}, []string{"-race", "-run", "^(FuzzLong|TestLong|TestRoot|TestSub)$", ".", "./x"}},
		{root, []string{"-race", "./x"}, []string{"-race", "-run", "^(FuzzLong|TestLong|TestSub)$", "./x"}},
		{root, []string{"."}, []string{"-run", "^(TestRoot)$", "."}},
		{filepath.Join(root, "x"), []string{"-count=1"}, []string{"-count=1", "-run", "^(FuzzLong|TestLong|TestSub)$", "./x"}},
	} {
		got, err := longArgs(root, tc.wd, tc.args)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("longArgs(%q) from %s = %q, %v; want %q", tc.args, tc.wd, got, err, tc.want)
		}
	}
	if _, err := longArgs(root, root, []string{"-run", "TestLong"}); err == nil {
		t.Error("longArgs accepted -run")
	}
	if _, err := longArgs(root, root, []string{"./other/..."}); err == nil {
		t.Error("longArgs found long tests in another module")
	}
}

// TestRunGoTest runs the real go test on a small module: the exit status
// is go test's, and the summary names the variable of the skipped test
// and the failed test.
func TestRunGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	write(t, filepath.Join(dir, "m_test.go"), `package m

import "testing"

func TestPass(t *testing.T) {}
func TestSkip(t *testing.T) { t.Skip("set CRAWLKEEPER_TEST_EXAMPLE to run it") }
func TestFail(t *testing.T) { t.Error("it broke") }
`)
	t.Chdir(dir)
	t.Setenv("GOWORK", "off")
	var out, errs bytes.Buffer
	code := run([]string{"-count=1"}, &out, &errs)
	if code != 1 {
		t.Fatalf("exit status %d, want 1\nstdout:\n%s\nstderr:\n%s", code, &out, &errs)
	}
	for _, want := range []string{
		"go test -json -count=1 ./...\n",
		"FAIL  .",
		"it broke",
		"ran:      1 package, 1 test passed, 1 failed\n",
		"  CRAWLKEEPER_TEST_EXAMPLE       1 test in .: set CRAWLKEEPER_TEST_EXAMPLE to run it\n",
		"FAILED:   TestFail (.)\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output lacks %q; it is:\n%s", want, &out)
		}
	}
}
