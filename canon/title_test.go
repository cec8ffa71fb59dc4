package canon

import (
	"testing"
	"unicode/utf8"
)

func TestTitleForms(t *testing.T) {
	for _, tc := range []struct {
		in   string
		fold bool
		want string
	}{
		{"Data Engineer", true, "data engineer"},
		{"  Data \t Engineer\n", true, "data engineer"},
		{"DATA ENGINEER", true, "data engineer"},
		{"Ｄａｔａ　Ｅｎｇｉｎｅｅｒ", true, "data engineer"},
		{"Straße", true, "strasse"},
		{"STRASSE", true, "strasse"},
		{"ΣΊΣΥΦΟΣ", true, "σίσυφοσ"},
		{"Café", true, "café"},
		{"Cafe\u0301", true, "café"},
		{"Data\u00adEngineer\u200b", true, "dataengineer"},
		{"ﬁle ①", true, "file 1"},
		{"\u00a0Über\u3000uns\u00a0", true, "über uns"},
		{"", true, ""},
		{"Data  Engineer", false, "Data Engineer"},
		{"Ｄａｔａ", false, "Ｄａｔａ"},
		{"Q&amp;A", true, "q&a"},
		{"Q&amp;A", false, "Q&A"},
		{"It&#8217;s", true, "it's"},
		{"It&#8217;s", false, "It’s"},
		{"It’s", false, "It’s"},
		{"Tom &amp;amp;amp; Jerry", true, "tom & jerry"},
		{"A &AMP; B", true, "a & b"},
		{"＆ａｍｐ；", true, "&"},
		{"&&#97;mp;", true, "&"},
		{"&#38;#38;lt;", false, "<"},
		{"&nbsp;News&nbsp;", true, "news"},
		{"Fish & Chips", true, "fish & chips"},
		{"AT&T", false, "AT&T"},
		{"x&unknown;y", true, "x&unknown;y"},
		{"Senior Engineer – Berlin", true, "senior engineer - berlin"},
		{"“Quoted”", true, "\"quoted\""},
	} {
		if got := Title(tc.in, tc.fold); got != tc.want {
			t.Errorf("Title(%q, %v) = %q, want %q", tc.in, tc.fold, got, tc.want)
		}
	}
}

// TestTitleSameText lists titles as crawlers deliver them, which must
// fold to one: HTML character references left in by a crawler that read
// the title out of HTML without decoding it (once or twice), next to the
// decoded title and to the one a feed or an API gave with plain
// punctuation.
func TestTitleSameText(t *testing.T) {
	for _, group := range [][]string{
		{"Q&A: What’s next for remote work", "Q&amp;A: What&#8217;s next for remote work", "Q&amp;amp;A: What&amp;#8217;s next for remote work", "Q&A: What's next for remote work", "Q&#038;A: What&rsquo;s next for remote work"},
		{"R&D Engineer (m/f/d)", "R&amp;D Engineer (m/f/d)", "R&#38;D Engineer (m/f/d)", "R&#x26;D Engineer (m/f/d)"},
		{"Senior Engineer – Berlin", "Senior Engineer &#8211; Berlin", "Senior Engineer &ndash; Berlin", "Senior Engineer - Berlin"},
		{"“Hello”, said the Mayor", "&quot;Hello&quot;, said the Mayor", "&#8220;Hello&#8221;, said the Mayor", "&ldquo;Hello&rdquo;, said the Mayor"},
		{"Café manager", "Caf&eacute; manager", "Caf&#233; manager", "Caf&#xE9; manager", "CAF&Eacute; MANAGER"},
		{"Rock & Roll Hall of Fame", "Rock &amp; Roll Hall of Fame", "Rock&nbsp;&amp;&nbsp;Roll Hall of Fame", "Rock &amp;amp; Roll Hall of Fame"},
		{"5 < 6 isn't news", "5 &lt; 6 isn&#039;t news", "5 &lt; 6 isn&#39;t news", "5 &amp;lt; 6 isn&apos;t news"},
		{"Café", "Cafe&#x301;", "Cafe&#769;"},
		{"Data Engineer", "Data&nbsp;Engineer", "Data&#32;Engineer&#8203;", "Data&#xA0;&#xA0;Engineer"},
		{"Dataengineer", "Data&shy;engineer\u00ad "},
	} {
		want := Title(group[0], true)
		for _, s := range group[1:] {
			if got := Title(s, true); got != want {
				t.Errorf("Title(%q) = %q, want %q (the title of %q)", s, got, want, group[0])
			}
		}
	}
}

// With KeepEntities, references are text: a source keyed by title alone
// whose titles quote HTML (a site about HTML) keeps them apart.
func TestTitleKeepEntities(t *testing.T) {
	for _, fold := range []bool{true, false} {
		o := TitleOptions{Fold: fold, KeepEntities: true}
		if a, b := o.Title("Q&amp;A"), o.Title("Q&A"); a == b {
			t.Errorf("fold %v, keep entities: %q and %q fold to one title", fold, "Q&amp;A", "Q&A")
		}
	}
	if got := (TitleOptions{Fold: true, KeepEntities: true}).Title("Ｑ＆ａｍｐ；Ａ"); got != "q&amp;a" {
		t.Errorf("keep entities: %q", got)
	}
}

func TestTitleApart(t *testing.T) {
	for _, tc := range [][2]string{
		{"Data Engineer", "Data Engineers"},
		{"Senior Data Engineer", "Data Engineer"},
		{"Café", "Cafe"},
		{"Resume", "Résumé"},
		{"Open Day 2024", "Open Day 2025"},
		{"AT&T", "AT T"},
		{"C&amp;A", "CA"},
		{"5 &lt; 6", "5 6"},
		{"Data Engineer", "Data-Engineer"},
		{"It's", "Its"},
		{"&copy; 2024", "2024"},
	} {
		if Title(tc[0], true) == Title(tc[1], true) {
			t.Errorf("%q and %q fold to one title", tc[0], tc[1])
		}
	}
}

func BenchmarkTitle(b *testing.B) {
	for _, bc := range []struct{ name, in string }{
		{"ASCII", "Senior Data Engineer (m/f/d) in Berlin"},
		{"Unicode", "Ｓｅｎｉｏｒ Data Engineer – München, Straße"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				Title(bc.in, true)
			}
		})
	}
}

func FuzzTitle(f *testing.F) {
	for _, s := range []string{"Data Engineer", "Straße ＡＢＣ", "\u00ad\u200b", "ΣΊΣΥΦΟΣ", "\xff\xfe",
		"Q&amp;amp;A", "&&#97;mp;", "＆ａｍｐ；", "&#xFDFA;&amp", "e&#x301;&#8217;&ndash;", "&#0000000000000000000000000000000000000000038;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, o := range []TitleOptions{{Fold: true}, {}, {Fold: true, KeepEntities: true}, {KeepEntities: true}} {
			c := o.Title(s)
			if again := o.Title(c); again != c {
				t.Fatalf("Title(%+v) not stable: %q -> %q -> %q", o, s, c, again)
			}
			if o.Fold && !utf8.ValidString(c) {
				t.Fatalf("invalid UTF-8 %q from %q", c, s)
			}
		}
	})
}

// Cherokee folds to its capitals (Unicode CaseFolding.txt), whichever
// case a title is written in, and folding a folded title changes nothing.
func TestTitleFoldsCherokeeToCapitals(t *testing.T) {
	for _, s := range []string{"\uABAE\uAB83", "\u13DE\u13B3", "\uABAE\u13B3", "\u13F8"} {
		got := Title(s, true)
		for _, r := range got {
			if r >= 0xAB70 && r <= 0xABBF || r >= 0x13F8 && r <= 0x13FD {
				t.Errorf("Title(%q) = %q keeps the small letter %U", s, got, r)
			}
		}
		if again := Title(got, true); again != got {
			t.Errorf("Title(%q) = %q, then %q", s, got, again)
		}
	}
	if a, b := Title("\uABAE\uAB83", true), Title("\u13DE\u13B3", true); a != b {
		t.Errorf("small and capital Cherokee fold apart: %q, %q", a, b)
	}
}
