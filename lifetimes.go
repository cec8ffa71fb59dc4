package crawlkeeper

import (
	"context"
	"time"
)

// LifetimeReader is implemented by stores that read the lifetimes of
// recently archived records without loading the records themselves. The
// dashboard's lifetime histogram uses it when the store has it and falls
// back to a page of the archive listing otherwise.
type LifetimeReader interface {
	// RecentLifetimes returns the lifetime (last_updated_at − crawled_at)
	// and source of up to limit archived records, the most recently
	// archived first. It reads one bounded range of an index on
	// archived_at, so its cost does not grow with the archive.
	RecentLifetimes(ctx context.Context, limit int) ([]Lifetime, error)
}

// Lifetime is how long one archived record was delivered by its crawlers.
type Lifetime struct {
	Source   string        `json:"source"`
	Lifetime time.Duration `json:"lifetime"`
}
