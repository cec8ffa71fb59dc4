// Package chain builds the reprocessing pipeline's processor chain from
// the names the configuration or a flag gives ("dates,fingerprint,stats").
// The crawlkeeper command and the Beam pipeline (a separate module) both
// build their chains here, so a name means the same processor in both.
package chain

import (
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/dates"
	"github.com/crawlkeeper/crawlkeeper/htmlextract"
	"github.com/crawlkeeper/crawlkeeper/processors"
)

// Known lists the processors a chain may name, for messages.
const Known = "dates, fingerprint, stats, extract, exec or noop"

// Options are what the processors of a chain are built with. Zero fields
// take the defaults named on them.
type Options struct {
	// Config gives per-source policies and the exec processor's program.
	// Defaults to an empty configuration.
	Config *crawlkeeper.Config
	// Dates parses event fields for the dates processor. Defaults to
	// dates.New().
	Dates crawlkeeper.DateParser
	// Now stamps the stats processor's saved counters. Defaults to
	// time.Now.
	Now func() time.Time
	// Workers is how many exec programs may run at once. Defaults to
	// the exec processor's default.
	Workers int
}

// Names splits a comma-separated list of processor names, dropping
// blanks; it returns nil for a blank list.
func Names(list string) []string {
	var out []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// Build makes the processors named, in order, and checks the chain. The
// returned function releases what they hold (exec programs); call it once
// the chain is no longer used.
func Build(names []string, o Options) ([]crawlkeeper.Processor, func(), error) {
	cfg := o.Config
	if cfg == nil {
		cfg = &crawlkeeper.Config{}
	}
	parser := o.Dates
	if parser == nil {
		parser = dates.New()
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	var procs []crawlkeeper.Processor
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	for _, n := range names {
		switch n {
		case "dates":
			procs = append(procs, &processors.Dates{Parser: parser, Config: cfg})
		case "fingerprint":
			procs = append(procs, &processors.Fingerprint{Config: cfg})
		case "stats":
			procs = append(procs, &processors.Stats{Now: now})
		case "extract":
			x, err := htmlextract.New(cfg)
			if err != nil {
				closeAll()
				return nil, nil, err
			}
			procs = append(procs, x)
		case "exec":
			ec := cfg.Pipeline.Exec
			if len(ec.Command) == 0 {
				closeAll()
				return nil, nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "the processor chain names exec but pipeline.exec.command is empty: name the program in the configuration")
			}
			x := &processors.Exec{Command: ec.Command, Timeout: ec.Timeout.D(), ProcessorVersion: ec.Version, Processes: o.Workers}
			closers = append(closers, func() { x.Close() })
			procs = append(procs, x)
		case "noop":
			procs = append(procs, processors.Noop{})
		default:
			closeAll()
			return nil, nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "unknown processor %q: use %s", n, Known)
		}
	}
	if err := crawlkeeper.ValidateChain(procs); err != nil {
		closeAll()
		return nil, nil, err
	}
	return procs, closeAll, nil
}
