package processors

import (
	"context"

	"github.com/crawlkeeper/crawlkeeper"
)

// Noop does nothing. A pass with it alone measures what the framework
// costs: reading, handing over, writing back and checkpointing.
type Noop struct{}

var _ crawlkeeper.Processor = Noop{}

// Name implements crawlkeeper.Processor.
func (Noop) Name() string { return "noop" }

// Version implements crawlkeeper.Processor.
func (Noop) Version() int { return 1 }

// Process implements crawlkeeper.Processor.
func (Noop) Process(context.Context, *crawlkeeper.Record, map[string]any) error { return nil }
