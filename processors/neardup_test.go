package processors_test

//go:generate go run ../internal/gencorpus -out testdata/neardup.jsonl

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/crawlkeeper/crawlkeeper/processors"
)

// corpusLine is one line of testdata/neardup.jsonl (internal/gencorpus).
type corpusLine struct {
	Para *int   `json:"para"`
	A    *int   `json:"a"`
	B    *int   `json:"b"`
	Text string `json:"text"`
	Dup  *bool  `json:"dup"`
	Edit string `json:"edit"`
}

// TestNearDuplicateCorpus measures the fingerprint processor on the
// labelled corpus made from Debian's debian-reference paragraphs: edited
// copies (up to three words substituted, inserted, deleted or swapped)
// must be grouped, different paragraphs (of the same chapter or of
// another) must not. Each pair goes through the processor as two records
// at different URLs.
func TestNearDuplicateCorpus(t *testing.T) {
	f, err := os.Open("testdata/neardup.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	paras := map[int]string{}
	var pairs []corpusLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l corpusLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if l.Para != nil {
			paras[*l.Para] = l.Text
		} else {
			pairs = append(pairs, l)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var tp, fp, fn, tn int
	missed := map[string]int{}
	for _, p := range pairs {
		b := p.Text
		if p.B != nil {
			b = paras[*p.B]
		}
		fpr := &processors.Fingerprint{}
		d := map[string]any{}
		for i, text := range []string{paras[*p.A], b} {
			r := rec(int64(i+1), "docs", "", map[string]any{"body": text})
			d = map[string]any{}
			if err := fpr.Process(ctx, r, d); err != nil {
				t.Fatal(err)
			}
		}
		grouped := d["fingerprint"].(map[string]any)["size"] == 2
		switch {
		case *p.Dup && grouped:
			tp++
		case *p.Dup:
			fn++
			missed[p.Edit]++
		case grouped:
			fp++
			missed[p.Edit]++
		default:
			tn++
		}
	}
	precision := float64(tp) / float64(tp+fp)
	recall := float64(tp) / float64(tp+fn)
	t.Logf("near-duplicate corpus: %d paragraphs, %d pairs (%d near-duplicates): precision %.3f, recall %.3f; wrong by edit: %v",
		len(paras), len(pairs), tp+fn, precision, recall, missed)
	if tp+fn < 200 || fp+tn < 200 {
		t.Fatalf("corpus too small: %d positives, %d negatives", tp+fn, fp+tn)
	}
	if precision < 0.95 || recall < 0.9 {
		t.Fatalf("precision %.3f (want ≥ 0.95), recall %.3f (want ≥ 0.9)", precision, recall)
	}
}
