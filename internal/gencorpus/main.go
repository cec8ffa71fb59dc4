// Command gencorpus writes the labelled near-duplicate corpus that
// processors' TestNearDuplicateCorpus measures the fingerprint processor
// on. It reads the HTML chapters of Debian's debian-reference-en package
// (apt-get install debian-reference-en), takes real paragraphs of 20 to 120
// words, and writes JSON lines:
//
//	{"para": 3, "chapter": "ch02", "text": "..."}            a paragraph
//	{"a": 3, "text": "...", "dup": true, "edit": "sub2"}      an edited copy of paragraph 3
//	{"a": 3, "b": 4, "dup": false, "edit": "same-chapter"}    two different paragraphs
//
// Positives are copies with an edit of known size, at most three words:
// words substituted (sub1..sub3), inserted (ins1..ins3), deleted
// (del1..del3), neighbouring words swapped (swap1, swap2), or one of each
// (mix3). Negatives are pairs of different paragraphs: the next paragraph of
// the same chapter (same topic, shared vocabulary) and a paragraph of
// another chapter. The output is deterministic for a given input.
//
//	go run ./internal/gencorpus -out processors/testdata/neardup.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/net/html"
)

type para struct {
	chapter string
	text    string
}

type line struct {
	Para    *int   `json:"para,omitempty"`
	Chapter string `json:"chapter,omitempty"`
	A       *int   `json:"a,omitempty"`
	B       *int   `json:"b,omitempty"`
	Text    string `json:"text,omitempty"`
	Dup     *bool  `json:"dup,omitempty"`
	Edit    string `json:"edit,omitempty"`
}

func main() {
	dir := flag.String("dir", "/usr/share/debian-reference", "folder of the debian-reference HTML chapters")
	out := flag.String("out", "processors/testdata/neardup.jsonl", "output file")
	n := flag.Int("n", 150, "paragraphs to take")
	flag.Parse()
	if err := run(*dir, *out, *n); err != nil {
		fmt.Fprintln(os.Stderr, "gencorpus:", err)
		os.Exit(1)
	}
}

func run(dir, out string, n int) error {
	files, err := filepath.Glob(filepath.Join(dir, "ch*.en.html"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no chapters in %s: apt-get install debian-reference-en", dir)
	}
	sort.Strings(files)
	var all []para
	seen := map[string]bool{}
	for _, f := range files {
		ps, err := paragraphs(f)
		if err != nil {
			return err
		}
		ch := strings.SplitN(filepath.Base(f), ".", 2)[0]
		for _, p := range ps {
			if w := len(strings.Fields(p)); w < 20 || w > 120 || seen[p] {
				continue
			}
			seen[p] = true
			all = append(all, para{ch, p})
		}
	}
	if len(all) < n {
		return fmt.Errorf("only %d usable paragraphs", len(all))
	}
	// Every k-th paragraph: spread over all chapters, with its successor
	// in the same chapter available as a same-topic negative.
	step := len(all) / n
	var picked []para
	var next []para
	for i := 0; i+1 < len(all) && len(picked) < n; i += step {
		picked = append(picked, all[i])
		next = append(next, all[i+1])
	}
	rng := rand.New(rand.NewPCG(17, 2024))
	var vocab []string
	for _, p := range all {
		vocab = append(vocab, strings.Fields(p.text)...)
	}

	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	yes, no := true, false
	// Paragraphs 0..n-1 are the picked ones, n..2n-1 their successors.
	for i, p := range append(append([]para(nil), picked...), next...) {
		id := i
		if err := enc.Encode(line{Para: &id, Chapter: p.chapter, Text: p.text}); err != nil {
			return err
		}
	}
	kinds := []string{"sub1", "sub2", "sub3", "ins1", "ins2", "ins3", "del1", "del2", "del3", "swap1", "swap2", "mix3"}
	for i, p := range picked {
		a := i
		for j := 0; j < 2; j++ {
			kind := kinds[(2*i+j)%len(kinds)]
			enc.Encode(line{A: &a, Text: edit(rng, strings.Fields(p.text), kind, vocab), Dup: &yes, Edit: kind})
		}
		b := n + i
		if next[i].chapter == p.chapter {
			enc.Encode(line{A: &a, B: &b, Dup: &no, Edit: "same-chapter"})
		}
		// A paragraph of another chapter.
		for {
			o := rng.IntN(len(picked))
			if picked[o].chapter != p.chapter {
				enc.Encode(line{A: &a, B: &o, Dup: &no, Edit: "other-chapter"})
				break
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// edit applies an edit of a known kind and size to words.
func edit(rng *rand.Rand, words []string, kind string, vocab []string) string {
	ws := append([]string(nil), words...)
	k := int(kind[len(kind)-1] - '0')
	word := func() string { return vocab[rng.IntN(len(vocab))] }
	switch kind[:len(kind)-1] {
	case "sub":
		for _, i := range rng.Perm(len(ws))[:k] {
			ws[i] = word()
		}
	case "ins":
		for ; k > 0; k-- {
			i := rng.IntN(len(ws) + 1)
			ws = append(ws[:i], append([]string{word()}, ws[i:]...)...)
		}
	case "del":
		for ; k > 0; k-- {
			i := rng.IntN(len(ws))
			ws = append(ws[:i], ws[i+1:]...)
		}
	case "swap":
		for ; k > 0; k-- {
			i := rng.IntN(len(ws) - 1)
			ws[i], ws[i+1] = ws[i+1], ws[i]
		}
	case "mix":
		ws[rng.IntN(len(ws))] = word()
		i := rng.IntN(len(ws) + 1)
		ws = append(ws[:i], append([]string{word()}, ws[i:]...)...)
		i = rng.IntN(len(ws))
		ws = append(ws[:i], ws[i+1:]...)
	}
	return strings.Join(ws, " ")
}

// paragraphs returns the text of the <p> elements of an HTML file (not
// the titles of tables and figures), white space collapsed.
func paragraphs(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := html.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	var out []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "p" && !hasClass(n, "title") {
			var b strings.Builder
			text(n, &b)
			if s := strings.Join(strings.Fields(b.String()), " "); s != "" {
				out = append(out, s)
			}
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out, nil
}

func text(n *html.Node, b *strings.Builder) {
	if n.Type == html.TextNode {
		b.WriteString(n.Data)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		text(c, b)
	}
}

func hasClass(n *html.Node, class string) bool {
	for _, a := range n.Attr {
		if a.Key == "class" && strings.Contains(" "+a.Val+" ", " "+class+" ") {
			return true
		}
	}
	return false
}
