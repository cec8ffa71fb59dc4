package processors

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/crawlkeeper/crawlkeeper"
)

// Fingerprint finds near-duplicates across different URLs: the same
// posting or article republished elsewhere with small edits. Each record
// gets a MinHash signature of the word pairs of its normalised title and
// text; two records are near-duplicates when the estimated Jaccard
// similarity of their word-pair sets is at least Threshold.
//
// Why MinHash over word pairs and not the former 64-bit SimHash: on short
// crawled texts (20 to 120 words) a two-word edit moves a SimHash by 6 to
// 17 bits while unrelated paragraphs of one topic come as close as 10
// bits, so no Hamming threshold separates them (the former 3-bit threshold
// grouped 21% of the edited pairs of the corpus in testdata). Word-pair
// Jaccard similarity separates them: edited copies of up to three words
// score 0.56 or more, different paragraphs of one chapter mostly under
// 0.35. TestNearDuplicateCorpus measures precision and recall.
//
// The signature has 128 minima, of which 8 bits each are kept (b-bit
// MinHash: 128 bytes per record, the similarity estimate corrected for
// chance agreement). Candidates are found by locality-sensitive hashing:
// 20 bands of 3 minima, so that a pair with similarity 0.56 shares a band
// with probability 0.98, and only candidates are compared.
//
// It writes derived.fingerprint = {"signature": hex, "cluster": id,
// "size": n} where signature is a digest of the MinHash signature (equal
// texts, equal signatures), size counts the record and its near-duplicates
// among the active records and cluster is the smallest id among them, so
// every member of a group of identical texts names the same cluster.
//
// The index of signatures is shared by all workers and lives in memory:
// the engine rebuilds it on start from every active record (Load), every
// processed record updates it, and records that leave the active set are
// swept out after each complete pass. Cluster sizes written to a record
// are therefore at most one pass old: a statistic that follows the
// corpus.
type Fingerprint struct {
	// Config gives each source's HTML and volatile fields, which are left
	// out of the text, and pipeline.fingerprint's threshold and minimum
	// words when the fields below are zero.
	Config *crawlkeeper.Config
	// Threshold is the smallest estimated Jaccard similarity of the
	// word-pair sets of near-duplicates, from 0 to 1. Defaults to
	// pipeline.fingerprint.threshold, then DefaultFingerprintThreshold.
	Threshold float64
	// MinTokens is the fewest words a text needs to be fingerprinted:
	// shorter texts collide by accident. Defaults to
	// pipeline.fingerprint.min_words, then 5.
	MinTokens int

	mu     sync.RWMutex
	epoch  uint64
	byID   map[int64]fpEntry
	groups map[uint64]*fpGroup
	bands  map[uint32][]uint64
}

// DefaultFingerprintThreshold is the default Fingerprint.Threshold.
const DefaultFingerprintThreshold = 0.5

// MinHash signature shape: signatureLen minima, lshBands bands of lshRows
// minima each for candidate lookup.
const (
	signatureLen = 128
	lshBands     = 20
	lshRows      = 3
)

// Signature is a b-bit MinHash signature: the low 8 bits of each of 128
// minima.
type Signature [signatureLen]byte

type fpEntry struct {
	key   uint64
	epoch uint64
}

// fpGroup holds the records with one exact signature.
type fpGroup struct {
	sig Signature
	ids map[int64]struct{}
	min int64
}

var _ crawlkeeper.CorpusProcessor = (*Fingerprint)(nil)

// Name implements crawlkeeper.Processor.
func (f *Fingerprint) Name() string { return "fingerprint" }

// Version implements crawlkeeper.Processor. Version 2 replaced the SimHash
// with MinHash (derived.fingerprint.simhash became signature).
func (f *Fingerprint) Version() int { return 2 }

func (f *Fingerprint) threshold() float64 {
	if f.Threshold > 0 {
		return f.Threshold
	}
	if f.Config != nil && f.Config.Pipeline.Fingerprint.Threshold > 0 {
		return f.Config.Pipeline.Fingerprint.Threshold
	}
	return DefaultFingerprintThreshold
}

func (f *Fingerprint) minTokens() int {
	if f.MinTokens > 0 {
		return f.MinTokens
	}
	if f.Config != nil && f.Config.Pipeline.Fingerprint.MinWords > 0 {
		return f.Config.Pipeline.Fingerprint.MinWords
	}
	return 5
}

// Process implements crawlkeeper.Processor.
func (f *Fingerprint) Process(_ context.Context, r *crawlkeeper.Record, derived map[string]any) error {
	sig, ok, err := f.signature(r)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	if !ok {
		f.remove(r.ID)
		derived["fingerprint"] = map[string]any{"signature": nil, "cluster": r.ID, "size": 1}
		return nil
	}
	key := f.put(r.ID, sig)
	cluster, size := f.cluster(sig)
	derived["fingerprint"] = map[string]any{"signature": fmt.Sprintf("%016x", key), "cluster": cluster, "size": size}
	return nil
}

// Load implements crawlkeeper.CorpusProcessor.
func (f *Fingerprint) Load(r *crawlkeeper.Record) {
	sig, ok, err := f.signature(r)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	if err != nil || !ok {
		f.remove(r.ID)
		return
	}
	f.put(r.ID, sig)
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
	f.bands = map[uint32][]uint64{}
}

// bandKey is band i of sig with the band number in the top byte.
func bandKey(sig *Signature, i int) uint32 {
	j := i * lshRows
	return uint32(i)<<24 | uint32(sig[j])<<16 | uint32(sig[j+1])<<8 | uint32(sig[j+2])
}

// sigKey is a 64-bit digest of a signature: the group of identical texts.
func sigKey(sig *Signature) uint64 {
	h := uint64(14695981039346656037)
	for _, b := range sig {
		h ^= uint64(b)
		h *= 1099511628211
	}
	return mix(h)
}

// put indexes id under sig, moving it from its previous signature, and
// returns the signature's digest.
func (f *Fingerprint) put(id int64, sig Signature) uint64 {
	key := sigKey(&sig)
	if e, ok := f.byID[id]; ok && e.key == key {
		f.byID[id] = fpEntry{key: key, epoch: f.epoch}
		return key
	}
	f.remove(id)
	f.byID[id] = fpEntry{key: key, epoch: f.epoch}
	g := f.groups[key]
	if g == nil {
		g = &fpGroup{sig: sig, ids: map[int64]struct{}{}, min: id}
		f.groups[key] = g
		for i := 0; i < lshBands; i++ {
			b := bandKey(&sig, i)
			f.bands[b] = append(f.bands[b], key)
		}
	}
	g.ids[id] = struct{}{}
	if id < g.min {
		g.min = id
	}
	return key
}

func (f *Fingerprint) remove(id int64) {
	e, ok := f.byID[id]
	if !ok {
		return
	}
	delete(f.byID, id)
	g := f.groups[e.key]
	delete(g.ids, id)
	if len(g.ids) == 0 {
		delete(f.groups, e.key)
		for i := 0; i < lshBands; i++ {
			b := bandKey(&g.sig, i)
			ks := f.bands[b]
			for j, x := range ks {
				if x == e.key {
					ks[j] = ks[len(ks)-1]
					ks = ks[:len(ks)-1]
					break
				}
			}
			if len(ks) == 0 {
				delete(f.bands, b)
			} else {
				f.bands[b] = ks
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

// cluster returns the smallest id and the number of records whose
// signature is similar enough to sig, among the groups sharing a band.
func (f *Fingerprint) cluster(sig Signature) (int64, int) {
	seen := map[uint64]bool{}
	var minID int64
	size := 0
	t := f.threshold()
	for i := 0; i < lshBands; i++ {
		for _, k := range f.bands[bandKey(&sig, i)] {
			if seen[k] {
				continue
			}
			seen[k] = true
			g := f.groups[k]
			if Similarity(&sig, &g.sig) < t {
				continue
			}
			size += len(g.ids)
			if minID == 0 || g.min < minID {
				minID = g.min
			}
		}
	}
	return minID, size
}

// Similarity estimates the Jaccard similarity of the word-pair sets two
// signatures were made from. Each of the 8-bit minima agrees by chance
// with probability 1/256, which the estimate removes.
func Similarity(a, b *Signature) float64 {
	same := 0
	for i := range a {
		if a[i] == b[i] {
			same++
		}
	}
	const chance = 1.0 / 256
	j := (float64(same)/signatureLen - chance) / (1 - chance)
	if j < 0 {
		return 0
	}
	return j
}

// signature returns the MinHash signature of r's title and text, and false
// when the text is too short to say anything.
func (f *Fingerprint) signature(r *crawlkeeper.Record) (Signature, bool, error) {
	text, err := recordText(f.Config, r)
	if err != nil {
		return Signature{}, false, err
	}
	tokens := Tokens(text)
	if len(tokens) < f.minTokens() {
		return Signature{}, false, nil
	}
	return MinHash(tokens), true, nil
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

// MinHash is the signature of the set of neighbouring word pairs of
// tokens (a single word when there is only one): pairs make word order
// count, so texts with the same vocabulary in another order are told
// apart. Minimum i is taken over mix(h + i·φ) for each pair's hash h, a
// family of 128 hash functions from one 64-bit hash per pair.
func MinHash(tokens []string) Signature {
	var mins [signatureLen]uint64
	for i := range mins {
		mins[i] = ^uint64(0)
	}
	add := func(h uint64) {
		for i := range mins {
			if v := mix(h + uint64(i+1)*0x9e3779b97f4a7c15); v < mins[i] {
				mins[i] = v
			}
		}
	}
	if len(tokens) == 1 {
		add(mix(fnv64(tokens[0], 0)))
	}
	for i := 1; i < len(tokens); i++ {
		add(mix(fnv64(tokens[i], fnv64(tokens[i-1], 0))))
	}
	var sig Signature
	for i, m := range mins {
		sig[i] = byte(m)
	}
	return sig
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
