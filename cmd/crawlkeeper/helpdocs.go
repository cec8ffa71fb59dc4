package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/crawlkeeper/crawlkeeper/config"
)

// The reference docs come from the code: docs/CLI.md from the flag sets
// the commands build, docs/CONFIG.md from the configuration's own types
// (config.Reference). A test fails when the checked-in files differ from
// what these functions write.

// cliDocCommand and configDocCommand regenerate the reference docs; the
// files say so, and so does the test that finds them stale.
const (
	cliDocCommand    = "go run ./cmd/crawlkeeper help --markdown > docs/CLI.md"
	configDocCommand = "go run ./cmd/crawlkeeper help config --markdown > docs/CONFIG.md"
)

// helpTopic answers `help --markdown`, `help config` and `help config
// --markdown`. done is false for anything else (a command's name).
func (a *app) helpTopic(ctx context.Context, args []string) (done bool, code int) {
	switch {
	case len(args) == 1 && args[0] == "--markdown":
		return true, a.exit(writeCLIMarkdown(ctx, a.stdout))
	case args[0] == "config":
		switch {
		case len(args) == 1:
			writeConfigText(a.stdout)
			return true, 0
		case len(args) == 2 && args[1] == "--markdown":
			writeConfigMarkdown(a.stdout)
			return true, 0
		}
		return true, a.exit(usagef("help config takes no arguments other than --markdown"))
	}
	return false, 0
}

// commandDoc is what the reference says about one command or subcommand.
type commandDoc struct {
	name    string // "round queue"
	summary string
	// usage is the synopsis after "crawlkeeper ", one form per line.
	usage string
	// flags are the command's own flags, the common ones left out.
	flags []*flag.Flag
	subs  []commandDoc
}

// commonFlags returns the flags every command takes, with their built-in
// defaults.
func commonFlags() []*flag.Flag {
	a := &app{describe: func(*flag.FlagSet, string) {}}
	var out []*flag.Flag
	a.newFlags("", "").VisitAll(func(f *flag.Flag) { out = append(out, f) })
	return out
}

// describeCommands returns every command, by name, with its subcommands.
func describeCommands(ctx context.Context) ([]commandDoc, error) {
	common := map[string]bool{}
	for _, f := range commonFlags() {
		common[f.Name] = true
	}
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []commandDoc
	for _, n := range names {
		c := commands[n]
		d, err := describeCommand(ctx, c, nil, common)
		if err != nil {
			return nil, err
		}
		for _, s := range c.subs {
			sd, err := describeCommand(ctx, c, []string{s}, common)
			if err != nil {
				return nil, err
			}
			d.subs = append(d.subs, sd)
		}
		out = append(out, d)
	}
	return out, nil
}

// describeCommand runs c (with the subcommand in sub) in describe mode: the flag
// set it builds is reported instead of parsed, so nothing is opened or
// written. A command that prints its own usage (round) has that usage.
func describeCommand(ctx context.Context, c *command, sub []string, common map[string]bool) (commandDoc, error) {
	name := strings.Join(append([]string{c.name}, sub...), " ")
	d := commandDoc{name: name, summary: c.summary}
	var out bytes.Buffer
	described := false
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &out}
	a.describe = func(fs *flag.FlagSet, usage string) {
		described = true
		d.usage = usage
		fs.VisitAll(func(f *flag.Flag) {
			if !common[f.Name] {
				d.flags = append(d.flags, f)
			}
		})
	}
	err := c.run(ctx, a, append(sub[:len(sub):len(sub)], "-h"))
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return d, fmt.Errorf("describe %s: %w", name, err)
	}
	if !described {
		text := strings.TrimSpace(out.String())
		if text == "" {
			return d, fmt.Errorf("describe %s: the command neither built a flag set nor printed its usage", name)
		}
		d.usage = strings.TrimPrefix(text, "Usage: crawlkeeper ")
	}
	if len(sub) > 0 {
		d.summary = ""
	}
	return d, nil
}

// writeCLIMarkdown writes docs/CLI.md.
func writeCLIMarkdown(ctx context.Context, w io.Writer) error {
	cmds, err := describeCommands(ctx)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Command-line reference\n\n")
	fmt.Fprintf(&b, "<!-- Generated from the commands' flag sets by `crawlkeeper help --markdown`: do not edit.\n     Regenerate with `%s`. -->\n\n", cliDocCommand)
	b.WriteString(`Usage: ` + "`crawlkeeper COMMAND [flags] [args]`" + `. Flags may come before, between or after
the arguments; after ` + "`--`" + ` every argument is an argument. ` + "`crawlkeeper help COMMAND`" + ` prints
one command's flags, ` + "`crawlkeeper help config`" + ` the configuration keys ([CONFIG.md](CONFIG.md)).

Exit status: 0 when the command did its work (an ingest that rejected some items
included), 1 when it failed (or ` + "`check`" + ` found a broken invariant), 2 for a mistake in
the command line, 130 when interrupted.

## Flags every command takes

`)
	writeFlagTable(&b, commonFlags())
	b.WriteString("\n## Commands\n\n| command | what it does |\n|---|---|\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s |\n", c.name, anchor(c.name), cell(c.summary))
	}
	for _, c := range cmds {
		fmt.Fprintf(&b, "\n## %s\n\n%s.\n\n", c.name, upperFirst(c.summary))
		writeCommand(&b, c)
		for _, s := range c.subs {
			fmt.Fprintf(&b, "\n### %s\n\n", s.name)
			writeCommand(&b, s)
		}
	}
	_, err = io.WriteString(w, b.String())
	return err
}

func writeCommand(b *strings.Builder, c commandDoc) {
	b.WriteString("```\n")
	for _, line := range strings.Split(c.usage, "\n") {
		line = strings.TrimSpace(line)
		line = strings.TrimPrefix(line, "crawlkeeper ")
		if line == "" {
			b.WriteString("\n")
			continue
		}
		if !strings.HasPrefix(line, c.name) && !strings.HasPrefix(line, strings.Fields(c.name)[0]) {
			// A continuation, such as round's list of subcommands.
			fmt.Fprintf(b, "  %s\n", line)
			continue
		}
		fmt.Fprintf(b, "crawlkeeper %s\n", line)
	}
	b.WriteString("```\n")
	if len(c.flags) > 0 {
		b.WriteString("\n")
		writeFlagTable(b, c.flags)
	}
}

func writeFlagTable(b *strings.Builder, flags []*flag.Flag) {
	b.WriteString("| flag | default | what it does |\n|---|---|---|\n")
	for _, f := range flags {
		arg, usage := flag.UnquoteUsage(f)
		name := "--" + f.Name
		if arg != "" {
			name += " " + arg
		}
		def := ""
		if !zeroDefault(f) {
			def = "`" + f.DefValue + "`"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s |\n", name, def, cell(usage))
	}
}

// zeroDefault reports whether f's default is its type's zero value, which
// the reference leaves out as flag.PrintDefaults does.
func zeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "[]":
		return true
	}
	return false
}

// anchor is the id GitHub gives the heading text.
func anchor(heading string) string {
	return strings.ReplaceAll(strings.ToLower(heading), " ", "-")
}

// cell makes text safe inside a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

const configIntro = `crawlkeeper reads one YAML file, named by --config FILE or $CRAWLKEEPER_CONFIG;
without one, every key has its default. Every key is optional, and an unknown
key is an error that names it. Per-source settings go under defaults (every
source) and sources.NAME (one source): a key a source does not set falls back
to defaults, then to the built-in default. Durations are written 90m, 36h, 30d,
2w or 1d12h, and off (or 0) turns a rule off. API tokens may also come from
$CRAWLKEEPER_TOKENS: entries [NAME=]TOKEN:SCOPE[,SCOPE] separated by ";".
`

// writeConfigText prints the configuration reference for a terminal.
func writeConfigText(w io.Writer) {
	fmt.Fprintf(w, "Configuration\n\n%s", configIntro)
	for _, k := range config.Reference() {
		top := !strings.ContainsAny(k.Path, ".[") || k.Path == "sources.NAME"
		doc := strings.ReplaceAll(k.Doc, "`", "")
		if top {
			fmt.Fprintf(w, "\n%s\n", k.Path)
			wrap(w, doc, "    ")
			continue
		}
		what := k.Type
		switch k.Type {
		case "section":
			what = "keys below"
		case "list":
			what = "a list of entries with the keys below"
		}
		fmt.Fprintf(w, "  %s: %s\n", k.Path, what)
		if k.Default != "" {
			wrap(w, "Default: "+strings.ReplaceAll(k.Default, "`", ""), "      ")
		}
		wrap(w, doc, "      ")
	}
	fmt.Fprintf(w, "\nAn example with the defaults spelled out:\n\n%s", config.Example)
}

// wrap writes text in lines of at most 80 columns, each after indent.
func wrap(w io.Writer, text, indent string) {
	line := indent
	for _, word := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(word) > 80 {
			fmt.Fprintln(w, line)
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += word
	}
	if len(line) > len(indent) {
		fmt.Fprintln(w, line)
	}
}

// writeConfigMarkdown writes docs/CONFIG.md.
func writeConfigMarkdown(w io.Writer) {
	var b strings.Builder
	b.WriteString("# Configuration reference\n\n")
	fmt.Fprintf(&b, "<!-- Generated from the configuration's types (config.Reference) by `crawlkeeper help config --markdown`: do not edit.\n     Regenerate with `%s`. -->\n\n", configDocCommand)
	intro := configIntro
	for _, code := range []string{"--config FILE", "$CRAWLKEEPER_CONFIG", "sources.NAME", "[NAME=]TOKEN:SCOPE[,SCOPE]", "$CRAWLKEEPER_TOKENS", "\";\"", "off"} {
		intro = strings.Replace(intro, code, "`"+strings.Trim(code, "\"")+"`", 1)
	}
	intro = strings.Replace(intro, "under defaults", "under `defaults`", 1)
	b.WriteString(intro)
	b.WriteString("`crawlkeeper help config` prints this reference. [RECIPES.md](RECIPES.md) has configurations\nfor news, jobs, events and product crawls.\n")
	inTable := false
	for _, k := range config.Reference() {
		top := !strings.ContainsAny(k.Path, ".[") || k.Path == "sources.NAME"
		if top {
			fmt.Fprintf(&b, "\n## `%s`\n\n%s\n", k.Path, k.Doc)
			inTable = false
			continue
		}
		if !inTable {
			b.WriteString("\n| key | type | default | what it does |\n|---|---|---|---|\n")
			inTable = true
		}
		typ := k.Type
		switch k.Type {
		case "section":
			typ = "keys below"
		case "list":
			typ = "list of entries with the keys below"
		}
		def := k.Default
		if def != "" && !strings.Contains(def, "`") && (!strings.Contains(def, " ") || strings.HasPrefix(def, "[")) {
			def = "`" + def + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.Path, typ, cell(def), cell(k.Doc))
	}
	fmt.Fprintf(&b, "\n## Example\n\nEvery default spelled out (`config.Example`):\n\n```yaml\n%s```\n", config.Example)
	io.WriteString(w, b.String())
}
