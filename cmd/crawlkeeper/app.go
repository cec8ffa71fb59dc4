package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/backends"
	"github.com/crawlkeeper/crawlkeeper/config"
	"golang.org/x/term"
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, a *app, args []string) error
	// subs names the subcommands that build flag sets of their own
	// (round queue, archive purge), in the order the reference lists them.
	subs []string
}

// commands is filled by each command's file in init, so adding a command
// touches only its own file.
var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

// usageError is a mistake in the command line; it exits with status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// exitError carries a specific exit status with an already printed message.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// app holds what every command shares: streams, common flags and the
// backends they open.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer

	data       string
	storeURL   string
	monitorURL string
	queueURL   string
	configPath string
	nowText    string
	json       bool

	cfg   *crawlkeeper.Config
	clock func() time.Time
	// speed is the clock's pace relative to real time (the demo's
	// time-lapse); 0 means real time.
	speed float64
	// baseClock is the clock when --now is not given: time.Now when nil
	// (tests pin it).
	baseClock func() time.Time

	// describe, when set, receives each flag set a command builds in place
	// of parsing it, with the command's usage line, and the command stops
	// there: the command-line reference lists flags without running
	// anything. Flag defaults then ignore the environment.
	describe func(fs *flag.FlagSet, usage string)
	usages   map[*flag.FlagSet]string
}

// Run runs crawlkeeper with args (without the program name) and returns
// the exit status.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, &app{stdin: stdin, stdout: stdout, stderr: stderr}, args)
}

func run(ctx context.Context, a *app, args []string) int {
	stdout, stderr := a.stdout, a.stderr
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 && args[0] == "help" {
			if done, code := a.helpTopic(ctx, args[1:]); done {
				return code
			}
		}
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return a.exit(c.run(ctx, a, []string{"-h"}))
			}
		}
		// Help asked for goes to stdout (`crawlkeeper --help | less`);
		// no command at all is a usage error.
		if len(args) == 0 {
			a.usage(stderr)
			return 2
		}
		a.usage(stdout)
		return 0
	}
	if args[0] == "version" || args[0] == "--version" {
		fmt.Fprintln(stdout, "crawlkeeper", version())
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "crawlkeeper: unknown command %q; run `crawlkeeper help` for the list\n", args[0])
		return 2
	}
	return a.exit(c.run(ctx, a, args[1:]))
}

func (a *app) exit(err error) int {
	if err == nil {
		return 0
	}
	var ue *usageError
	var ee *exitError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(a.stderr, "crawlkeeper: %s\n", ue.msg)
		return 2
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(a.stderr, "crawlkeeper: interrupted")
		return 130
	}
	fmt.Fprintf(a.stderr, "crawlkeeper: %s\n", err)
	return 1
}

func (a *app) usage(w io.Writer) {
	fmt.Fprint(w, `crawlkeeper keeps crawled data clean, fresh and accountable.

Usage: crawlkeeper COMMAND [flags] [args]

Commands:
`)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	// The common flags come from the flag set every command builds, so
	// this list cannot miss one.
	fmt.Fprint(w, "\nEvery command takes:\n")
	for _, f := range commonFlags() {
		arg, usage := flag.UnquoteUsage(f)
		name := "--" + f.Name
		if arg != "" {
			name += " " + strings.ToUpper(arg)
		}
		if !zeroDefault(f) {
			usage += " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(w, "  %-16s %s\n", name, usage)
	}
	fmt.Fprint(w, `
Run 'crawlkeeper help COMMAND' for a command's flags, 'crawlkeeper help config'
for the configuration keys, and 'crawlkeeper help --markdown' for the reference
of every command (docs/CLI.md).
`)
}

// newFlags returns a flag set with the common flags registered.
func (a *app) newFlags(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(a.stderr)
	if a.usages == nil {
		a.usages = map[*flag.FlagSet]string{}
	}
	a.usages[fs] = usage
	env := envOr
	if a.describe != nil {
		env = func(_, def string) string { return def }
	}
	fs.StringVar(&a.data, "data", env("CRAWLKEEPER_DATA", backends.DefaultDataDir), "embedded store `folder` (also $CRAWLKEEPER_DATA)")
	fs.StringVar(&a.storeURL, "store", env("CRAWLKEEPER_STORE", ""), "record store `URL` (sqlite:///path, postgres://..., mysql://..., mongodb://...; also $CRAWLKEEPER_STORE)")
	fs.StringVar(&a.monitorURL, "monitor", env("CRAWLKEEPER_MONITOR", ""), "crawl monitor `URL` (default: embedded; redis://host:port/db; also $CRAWLKEEPER_MONITOR)")
	fs.StringVar(&a.queueURL, "queue", env("CRAWLKEEPER_QUEUE", ""), "notification queue `URL` (default: in process; nats://host:port; also $CRAWLKEEPER_QUEUE)")
	fs.StringVar(&a.configPath, "config", "", "YAML configuration `file` (default: $CRAWLKEEPER_CONFIG)")
	fs.StringVar(&a.nowText, "now", "", "use this RFC 3339 `time` as the clock")
	fs.BoolVar(&a.json, "json", false, "print machine-readable JSON")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: crawlkeeper %s\n\nFlags:\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// parse parses flags that may come before, between or after positional
// arguments, up to a "--" after which every argument is positional, loads
// the configuration and sets the clock. Help asked for with -h or --help
// goes to stdout; the usage after a mistake goes to stderr.
func (a *app) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	if a.describe != nil {
		a.describe(fs, a.usages[fs])
		return nil, flag.ErrHelp
	}
	if helpAsked(args) {
		fs.SetOutput(a.stdout)
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &usageError{msg: err.Error()}
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			// The flag package stopped at "--" and dropped it.
			pos = append(pos, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if err := a.setup(); err != nil {
		return nil, err
	}
	return pos, nil
}

// helpAsked reports whether args ask for help before any "--".
func helpAsked(args []string) bool {
	for _, arg := range args {
		switch arg {
		case "--":
			return false
		case "-h", "-help", "--h", "--help":
			return true
		}
	}
	return false
}

func (a *app) setup() error {
	cfg, err := config.Load(a.configPath)
	if err != nil {
		return err
	}
	a.cfg = cfg
	a.clock = a.baseClock
	if a.clock == nil {
		a.clock = time.Now
	}
	if a.nowText != "" {
		t, err := time.Parse(time.RFC3339Nano, a.nowText)
		if err != nil {
			return usagef("--now %q: use an RFC 3339 time such as 2025-09-15T12:00:00Z", a.nowText)
		}
		a.clock = func() time.Time { return t }
	}
	return nil
}

func (a *app) now() time.Time { return a.clock() }

// openStore opens the configured store, which must exist: a command that
// only reads, or works on records already there, fails with "no
// crawlkeeper store in DIR" rather than leave an empty store behind a
// mistyped --data or --store. Callers close it.
func (a *app) openStore(ctx context.Context) (crawlkeeper.Store, error) {
	return backends.OpenStoreWith(ctx, a.storeURL, a.data, crawlkeeper.StoreOptions{Durability: a.cfg.Store.Durability, MustExist: true})
}

// createStore opens the configured store and creates it when it does not
// exist: for the commands that bring data in (ingest, import, serve and
// the demo, round queue, done and fail). Callers close it.
func (a *app) createStore(ctx context.Context) (crawlkeeper.Store, error) {
	return backends.OpenStoreWith(ctx, a.storeURL, a.data, crawlkeeper.StoreOptions{Durability: a.cfg.Store.Durability})
}

// printJSON writes v as one line of JSON.
func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// isTerminal reports whether w is an interactive terminal, where long
// work shows progress.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func joinNonEmpty(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ", ")
}
