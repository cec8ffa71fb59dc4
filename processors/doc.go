// Package processors holds the pipeline's processors that need only the
// standard library: dates, fingerprint (near-duplicate clusters), stats
// (per-source counters), exec (an external program speaking JSON lines)
// and noop (for measuring the framework). The CSS-selector extractor,
// which needs an HTML library, lives in package htmlextract.
//
// Files are named after the processor they hold; each processor
// implements crawlkeeper.Processor and the optional interfaces it needs.
package processors

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/crawlkeeper/crawlkeeper"
)

// decodeItem decodes a stored item, keeping numbers as json.Number so
// that epoch timestamps and large ids keep their digits.
func decodeItem(r *crawlkeeper.Record) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(r.Item))
	dec.UseNumber()
	var item map[string]any
	if err := dec.Decode(&item); err != nil {
		return nil, fmt.Errorf("record %d: item is not a JSON object: %w", r.ID, err)
	}
	return item, nil
}

// policy returns the source's resolved configuration.
func policy(cfg *crawlkeeper.Config, source string) (*crawlkeeper.SourcePolicy, error) {
	if cfg == nil {
		cfg = &crawlkeeper.Config{}
	}
	return cfg.Policy(source)
}
