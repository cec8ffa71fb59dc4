package processors

import (
	"context"
	"fmt"
	"math/bits"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/crawlkeeper/crawlkeeper"
)

// Fingerprint finds near-duplicates across different URLs: the same
// posting or article republished elsewhere with small edits. Each record
// gets a 64-bit SimHash of its normalised title and text; two records are
// near-duplicates when their hashes differ in at most MaxDistance bits.
//
// It writes derived.fingerprint = {"simhash": hex, "cluster": id, "size": n}
// where size counts the record and its near-duplicates among the active
// records and cluster is the smallest id among them, so every member of a
// group of identical texts names the same cluster.
//
// The index of hashes is shared by all workers and lives in memory: the
// engine rebuilds it on start from every active record (Load), every
// processed record updates it, and records that leave the active set are
// swept out after each complete pass. Cluster sizes written to a record
// are therefore at most one pass old: a statistic that follows the
// corpus.
type Fingerprint struct {
	// Config gives each source's HTML and volatile fields, which are left
	// out of the text.
	Config *crawlkeeper.Config
	// MaxDistance is the largest Hamming distance between near-duplicates.
	// At most 3, so that one of four 16-bit bands always matches exactly.
	// Defaults to 3.
	MaxDistance int
	// MinTokens is the fewest words a text needs to be fingerprinted:
	// shorter texts collide by accident. Defaults to 5.
	MinTokens int

	mu     sync.RWMutex
	epoch  uint64
	byID   map[int64]fpEntry
	groups map[uint64]*fpGroup
	bands  [4]map[uint16][]uint64
}

type fpEntry struct {
	hash  uint64
	epoch uint64
}

// fpGroup holds the records with one exact hash.
type fpGroup struct {
	ids map[int64]struct{}
	min int64
}

var _ crawlkeeper.CorpusProcessor = (*Fingerprint)(nil)

// Name implements crawlkeeper.Processor.
func (f *Fingerprint) Name() string { return "fingerprint" }

// Version implements crawlkeeper.Processor.
func (f *Fingerprint) Version() int { return 1 }

func (f *Fingerprint) maxDistance() int {
	if f.MaxDistance > 0 && f.MaxDistance <= 3 {
		return f.MaxDistance
	}
	return 3
}

func (f *Fingerprint) minTokens() int {
	if f.MinTokens > 0 {
		return f.MinTokens
	}
	return 5
}

// Process implements crawlkeeper.Processor.
func (f *Fingerprint) Process(_ context.Context, r *crawlkeeper.Record, derived map[string]any) error {
	h, ok, err := f.hash(r)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	if !ok {
		f.remove(r.ID)
		derived["fingerprint"] = map[string]any{"simhash": nil, "cluster": r.ID, "size": 1}
		return nil
	}
	f.put(r.ID, h)
	cluster, size := f.cluster(h)
	derived["fingerprint"] = map[string]any{"simhash": fmt.Sprintf("%016x", h), "cluster": cluster, "size": size}
	return nil
}

// Load implements crawlkeeper.CorpusProcessor.
func (f *Fingerprint) Load(r *crawlkeeper.Record) {
	h, ok, err := f.hash(r)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	if err != nil || !ok {
		f.remove(r.ID)
		return
	}
	f.put(r.ID, h)
}

// Mark implements crawlkeeper.CorpusProcessor.
func (f *Fingerprint) Mark() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.epoch++
	return f.epoch
}

// Sweep implements crawlkeeper.CorpusProcessor.
func (f *Fingerprint) Sweep(mark uint64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var old []int64
	for id, e := range f.byID {
		if e.epoch < mark {
			old = append(old, id)
		}
	}
	for _, id := range old {
		f.remove(id)
	}
	return len(old)
}

// Len returns how many records the index holds.
func (f *Fingerprint) Len() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.byID)
}

func (f *Fingerprint) init() {
	if f.byID != nil {
		return
	}
	f.byID = map[int64]fpEntry{}
	f.groups = map[uint64]*fpGroup{}
	for i := range f.bands {
		f.bands[i] = map[uint16][]uint64{}
	}
}

func band(h uint64, i int) uint16 { return uint16(h >> (16 * i)) }

// put indexes id under h, moving it from its previous hash.
func (f *Fingerprint) put(id int64, h uint64) {
	if e, ok := f.byID[id]; ok && e.hash == h {
		f.byID[id] = fpEntry{hash: h, epoch: f.epoch}
		return
	}
	f.remove(id)
	f.byID[id] = fpEntry{hash: h, epoch: f.epoch}
	g := f.groups[h]
	if g == nil {
		g = &fpGroup{ids: map[int64]struct{}{}, min: id}
		f.groups[h] = g
		for i := range f.bands {
			b := band(h, i)
			f.bands[i][b] = append(f.bands[i][b], h)
		}
	}
	g.ids[id] = struct{}{}
	if id < g.min {
		g.min = id
	}
}

func (f *Fingerprint) remove(id int64) {
	e, ok := f.byID[id]
	if !ok {
		return
	}
	delete(f.byID, id)
	g := f.groups[e.hash]
	delete(g.ids, id)
	if len(g.ids) == 0 {
		delete(f.groups, e.hash)
		for i := range f.bands {
			b := band(e.hash, i)
			hs := f.bands[i][b]
			for j, x := range hs {
				if x == e.hash {
					hs[j] = hs[len(hs)-1]
					hs = hs[:len(hs)-1]
					break
				}
			}
			if len(hs) == 0 {
				delete(f.bands[i], b)
			} else {
				f.bands[i][b] = hs
			}
		}
		return
	}
	if g.min == id {
		first := true
		for x := range g.ids {
			if first || x < g.min {
				g.min, first = x, false
			}
		}
	}
}

// cluster returns the smallest id and the number of records whose hash
// is within the distance of h. With distance at most 3, two such hashes
// agree exactly on at least one of the four bands, so the band buckets
// hold every candidate.
func (f *Fingerprint) cluster(h uint64) (int64, int) {
	seen := map[uint64]bool{}
	var minID int64
	size := 0
	for i := range f.bands {
		for _, x := range f.bands[i][band(h, i)] {
			if seen[x] {
				continue
			}
			seen[x] = true
			if bits.OnesCount64(x^h) > f.maxDistance() {
				continue
			}
			g := f.groups[x]
			size += len(g.ids)
			if minID == 0 || g.min < minID {
				minID = g.min
			}
		}
	}
	return minID, size
}

// hash returns the SimHash of r's title and text, and false when the text
// is too short to say anything.
func (f *Fingerprint) hash(r *crawlkeeper.Record) (uint64, bool, error) {
	text, err := recordText(f.Config, r)
	if err != nil {
		return 0, false, err
	}
	tokens := Tokens(text)
	if len(tokens) < f.minTokens() {
		return 0, false, nil
	}
	return SimHash(tokens), true, nil
}

// recordText joins the title and the item's text fields: every top-level
// string except the title, URLs and links, the HTML field, event fields
// and volatile fields, in field-name order.
func recordText(cfg *crawlkeeper.Config, r *crawlkeeper.Record) (string, error) {
	item, err := decodeItem(r)
	if err != nil {
		return "", err
	}
	pol, err := policy(cfg, r.Source)
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(item))
	for k := range item {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(r.Title)
	for _, k := range names {
		s, ok := item[k].(string)
		lk := strings.ToLower(k)
		if !ok || k == "title" || k == pol.HTMLField || strings.Contains(lk, "url") || strings.Contains(lk, "link") ||
			pol.IsEventField(k) || pol.IsVolatile(k) {
			continue
		}
		b.WriteByte('\n')
		b.WriteString(s)
	}
	return b.String(), nil
}

// Tokens lower-cases text and splits it into words of letters and digits.
func Tokens(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(c rune) bool {
		return !unicode.IsLetter(c) && !unicode.IsDigit(c)
	})
}

// SimHash is the 64-bit SimHash of tokens, with single words and pairs of
// neighbouring words as features: pairs make word order count, so texts
// with the same vocabulary in another order are told apart.
func SimHash(tokens []string) uint64 {
	var v [64]int
	add := func(h uint64) {
		for i := 0; i < 64; i++ {
			if h&(1<<i) != 0 {
				v[i]++
			} else {
				v[i]--
			}
		}
	}
	for i, t := range tokens {
		add(mix(fnv64(t, 0)))
		if i > 0 {
			add(mix(fnv64(t, fnv64(tokens[i-1], 0))))
		}
	}
	var h uint64
	for i := 0; i < 64; i++ {
		if v[i] > 0 {
			h |= 1 << i
		}
	}
	return h
}

// fnv64 is FNV-1a over s, continuing from seed when it is not zero.
func fnv64(s string, seed uint64) uint64 {
	h := uint64(14695981039346656037)
	if seed != 0 {
		h ^= seed
		h *= 1099511628211
	}
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// mix is the SplitMix64 finaliser: FNV's high bits depend weakly on the
// last bytes, and SimHash needs every bit to vary.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}
