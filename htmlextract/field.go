package htmlextract

import (
	"encoding/json"
	"fmt"

	"github.com/crawlkeeper/crawlkeeper"
)

// htmlField returns the item's HTML field, and false when the item has
// none (or it is not a string).
func htmlField(r *crawlkeeper.Record, name string) (string, bool, error) {
	// Only the one field is decoded: HTML fields are large and the rest of
	// the item is not needed.
	var item map[string]json.RawMessage
	if err := json.Unmarshal(r.Item, &item); err != nil {
		return "", false, fmt.Errorf("record %d: item is not a JSON object: %w", r.ID, err)
	}
	raw, ok := item[name]
	if !ok {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, nil
	}
	return s, true, nil
}
