package processors

import (
	"context"

	"github.com/crawlkeeper/crawlkeeper"
)

// Dates re-reads a record's event fields with the current date parser and
// configuration, and rewrites event_at and date_errors: records stored
// before a parser fix or a configuration change (a time zone, a new event
// field) get the better reading on their next pass.
type Dates struct {
	// Parser reads the dates. Defaults to crawlkeeper.MachineDates.
	Parser crawlkeeper.DateParser
	// Config gives each source's event fields, zone and language hints.
	Config *crawlkeeper.Config
	// ParserVersion is added to the processor's version: bump it when the
	// parser reads more dates, to make every record due again.
	ParserVersion int
}

var _ crawlkeeper.EventWriter = (*Dates)(nil)

// Name implements crawlkeeper.Processor.
func (d *Dates) Name() string { return "dates" }

// Version implements crawlkeeper.Processor.
func (d *Dates) Version() int { return 1 + d.ParserVersion }

// WritesEvent implements crawlkeeper.EventWriter.
func (d *Dates) WritesEvent() bool { return true }

// Process implements crawlkeeper.Processor. Relative dates ("in 3 days")
// are resolved against the moment the record's content last changed: that
// is when the crawler read the text, not when the pipeline re-reads it.
func (d *Dates) Process(_ context.Context, r *crawlkeeper.Record, derived map[string]any) error {
	item, err := decodeItem(r)
	if err != nil {
		return err
	}
	pol, err := policy(d.Config, r.Source)
	if err != nil {
		return err
	}
	parser := d.Parser
	if parser == nil {
		parser = crawlkeeper.MachineDates{}
	}
	r.EventAt, r.DateErrors = crawlkeeper.ReadEventFields(parser, pol, item, r.LastChangedAt)
	return nil
}
