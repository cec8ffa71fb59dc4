package recrawl

import (
	"context"
	"sync"
	"time"
)

// Store is where the simulator delivers every fetch and what the advisor
// reads back: crawlkeeper's ingest in the bench, MemStore in the tests.
// The advisor sees only what the store kept, never the simulated rates.
type Store interface {
	// Deliver stores the content of page as fetched at the given time.
	// The store decides whether it changed (by comparing it with what it
	// stored) and updates the page's counters as FetchStats.Observe does.
	Deliver(ctx context.Context, page, content string, at time.Time) error
	// Stats returns every stored page with its counters. The caller may
	// keep the slice; the store must not change it afterwards.
	Stats(ctx context.Context) ([]Record, error)
}

// MemStore is an in-memory Store that keeps the counters ingest keeps.
// It is safe for concurrent use; the zero value is ready to use.
type MemStore struct {
	// DropChangedLog makes it keep ChangedLogSeconds at 0, as a store
	// without that counter would: what the estimator does without it.
	DropChangedLog bool

	mu      sync.Mutex
	index   map[string]int
	records []Record
	content []string
}

var _ Store = (*MemStore)(nil)

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore { return &MemStore{} }

// Deliver implements Store.
func (m *MemStore) Deliver(_ context.Context, page, content string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.index == nil {
		m.index = map[string]int{}
	}
	i, ok := m.index[page]
	if !ok {
		i = len(m.records)
		m.index[page] = i
		m.records = append(m.records, Record{ID: int64(i + 1), Name: page})
		m.content = append(m.content, content)
		m.records[i].Stats = m.records[i].Stats.Observe(at, false)
		return nil
	}
	changed := m.content[i] != content
	m.content[i] = content
	m.records[i].Stats = m.records[i].Stats.Observe(at, changed)
	if m.DropChangedLog {
		m.records[i].Stats.ChangedLogSeconds = 0
	}
	return nil
}

// Stats implements Store.
func (m *MemStore) Stats(context.Context) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Record(nil), m.records...), nil
}

func (m *MemStore) recordsLen() int { return len(m.records) }
