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
	} {
		if got := Title(tc.in, tc.fold); got != tc.want {
			t.Errorf("Title(%q, %v) = %q, want %q", tc.in, tc.fold, got, tc.want)
		}
	}
}

func TestTitleApart(t *testing.T) {
	for _, tc := range [][2]string{
		{"Data Engineer", "Data Engineers"},
		{"Senior Data Engineer", "Data Engineer"},
		{"Café", "Cafe"},
		{"Resume", "Résumé"},
		{"Open Day 2024", "Open Day 2025"},
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
	for _, s := range []string{"Data Engineer", "Straße ＡＢＣ", "\u00ad\u200b", "ΣΊΣΥΦΟΣ", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, fold := range []bool{true, false} {
			c := Title(s, fold)
			if again := Title(c, fold); again != c {
				t.Fatalf("Title(fold=%v) not stable: %q -> %q -> %q", fold, s, c, again)
			}
			if fold && !utf8.ValidString(c) {
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
