package dates

import (
	"hash/maphash"
	"strings"
	"sync"

	"github.com/crawlkeeper/crawlkeeper"
)

// cacheKey is a string with the options that change how the fallback
// reads it.
type cacheKey struct {
	s     string
	loc   string
	hints string
	order byte
	start bool
	year  int // the year of now, for results that took their year from it
}

// cacheEntry is a remembered fallback outcome.
type cacheEntry struct {
	d        crawlkeeper.ParsedDate
	ok       bool
	yearDep  bool // the result took its year from now: look it up again with the year
	relative bool // the text is relative: it must be read again against now
}

// cache remembers fallback outcomes. Crawls deliver the same strings over
// and over, and the fallback costs milliseconds, so each distinct string is
// read once. It is sharded to keep goroutines apart, and each shard keeps
// two generations: when the current one is full it becomes the previous one
// and the old previous one is dropped, so the size stays bounded and
// strings still in use survive by moving to the current generation.
type cache struct {
	seed   maphash.Seed
	shards [16]cacheShard
	limit  int // entries per generation per shard
}

type cacheShard struct {
	mu        sync.Mutex
	cur, prev map[cacheKey]cacheEntry
}

func newCache(size int) *cache {
	c := &cache{seed: maphash.MakeSeed(), limit: size / (2 * 16)}
	if c.limit < 1 {
		c.limit = 1
	}
	for i := range c.shards {
		c.shards[i].cur = make(map[cacheKey]cacheEntry)
	}
	return c
}

func (c *cache) shard(k *cacheKey) *cacheShard {
	return &c.shards[maphash.String(c.seed, k.s)%uint64(len(c.shards))]
}

func (c *cache) get(k cacheKey) (cacheEntry, bool) {
	sh := c.shard(&k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e, ok := sh.cur[k]; ok {
		return e, true
	}
	if e, ok := sh.prev[k]; ok {
		sh.putLocked(k, e, c.limit)
		return e, true
	}
	return cacheEntry{}, false
}

func (c *cache) put(k cacheKey, e cacheEntry) {
	// The key must not pin the buffer the string was cut from.
	k.s = strings.Clone(k.s)
	sh := c.shard(&k)
	sh.mu.Lock()
	sh.putLocked(k, e, c.limit)
	sh.mu.Unlock()
}

func (sh *cacheShard) putLocked(k cacheKey, e cacheEntry, limit int) {
	if len(sh.cur) >= limit {
		sh.prev, sh.cur = sh.cur, make(map[cacheKey]cacheEntry, limit)
	}
	sh.cur[k] = e
}

// len returns the number of remembered entries.
func (c *cache) len() int {
	n := 0
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		n += len(sh.cur) + len(sh.prev)
		sh.mu.Unlock()
	}
	return n
}
