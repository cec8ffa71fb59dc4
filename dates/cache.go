package dates

import (
	"hash/maphash"
	"strings"
	"sync"
)

// cacheKey is a string with the options that change how the fallback
// reads it. Options applied after reading (the range end, upcoming
// weekdays, now) are not part of it: readings are remembered in a form
// that takes them at resolve time.
type cacheKey struct {
	s        string
	loc      string
	hints    string
	order    byte
	explicit bool // the order was given, not defaulted
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
	cur, prev map[cacheKey]reading
}

func newCache(size int) *cache {
	c := &cache{seed: maphash.MakeSeed(), limit: size / (2 * 16)}
	if c.limit < 1 {
		c.limit = 1
	}
	for i := range c.shards {
		c.shards[i].cur = make(map[cacheKey]reading)
	}
	return c
}

func (c *cache) shard(k *cacheKey) *cacheShard {
	return &c.shards[maphash.String(c.seed, k.s)%uint64(len(c.shards))]
}

func (c *cache) get(k cacheKey) (reading, bool) {
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
	return reading{}, false
}

func (c *cache) put(k cacheKey, e reading) {
	// The key must not pin the buffer the string was cut from.
	k.s = strings.Clone(k.s)
	sh := c.shard(&k)
	sh.mu.Lock()
	sh.putLocked(k, e, c.limit)
	sh.mu.Unlock()
}

func (sh *cacheShard) putLocked(k cacheKey, e reading, limit int) {
	if len(sh.cur) >= limit {
		sh.prev, sh.cur = sh.cur, make(map[cacheKey]reading, limit)
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
