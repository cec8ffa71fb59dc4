package canon

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func mustRules(t testing.TB, o URLOptions) *URLRules {
	t.Helper()
	r, err := NewURLRules(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestURLForms pins the canonical form of one input per rule.
func TestURLForms(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"SchemeHostCase", "HTTPS://Example.COM/Path/Case", "https://example.com/Path/Case"},
		{"DefaultPortHTTP", "http://example.com:80/x", "http://example.com/x"},
		{"DefaultPortHTTPS", "https://example.com:443/x", "https://example.com/x"},
		{"LeadingZeroPort", "https://example.com:0443/x", "https://example.com/x"},
		{"OtherPortKept", "https://example.com:8443/x", "https://example.com:8443/x"},
		{"PortOfOtherScheme", "http://example.com:443/x", "http://example.com:443/x"},
		{"EmptyPort", "https://example.com:/x", "https://example.com/x"},
		{"EmptyUserinfo", "https://@example.com/x", "https://example.com/x"},
		{"UserinfoKept", "https://User:pw@example.com/x", "https://User:pw@example.com/x"},
		{"TrailingDot", "https://example.com./x", "https://example.com/x"},
		{"IDNAToASCII", "https://Bücher.example/", "https://xn--bcher-kva.example/"},
		{"PunycodeKept", "https://XN--BCHER-KVA.example/", "https://xn--bcher-kva.example/"},
		{"FullWidthDots", "https://例え。テスト/", "https://xn--r8jz45g.xn--zckzah/"},
		{"PercentHost", "https://ex%41mple.com/", "https://example.com/"},
		{"NonUTF8HostBytesKept", "http://%A0.Example/x", "http://%A0.example/x"},
		{"BackslashIsSlash", `http://example.com\jobs\1?q=a\b`, "http://example.com/jobs/1?q=a%5Cb"},
		{"IPv6", "http://[2001:DB8:0:0:0:0:0:1]:80/", "http://[2001:db8::1]/"},
		{"EmptyPath", "https://example.com", "https://example.com/"},
		{"EmptyPathQuery", "https://example.com?b=1", "https://example.com/?b=1"},
		{"DotSegments", "https://example.com/a/./b/../c", "https://example.com/a/c"},
		{"DotSegmentsAboveRoot", "https://example.com/../../a", "https://example.com/a"},
		{"EncodedDots", "https://example.com/a/%2E%2E/b", "https://example.com/b"},
		{"UnreservedDecoded", "https://example.com/%7Euser/%41%62c", "https://example.com/~user/Abc"},
		{"HexUpperCased", "https://example.com/a%2fb%c3%bc", "https://example.com/a%2Fb%C3%BC"},
		{"SlashEscapeKept", "https://example.com/a%2Fb", "https://example.com/a%2Fb"},
		{"SubDelimsDecodedInPath", "https://example.com/Foo_%28bar%29", "https://example.com/Foo_(bar)"},
		{"NonASCIIPathEncoded", "https://example.com/straße", "https://example.com/stra%C3%9Fe"},
		{"StrayPercent", "https://example.com/100%", "https://example.com/100%25"},
		{"SpaceInPath", "https://example.com/a b", "https://example.com/a%20b"},
		{"TrailingSlash", "https://example.com/events/open-day/", "https://example.com/events/open-day"},
		{"RootSlashStays", "https://example.com/", "https://example.com/"},
		{"EmptyQuery", "https://example.com/a?", "https://example.com/a"},
		{"EmptyParams", "https://example.com/a?&&b=1&&", "https://example.com/a?b=1"},
		{"QuerySorted", "https://example.com/a?b=2&a=1&c=3", "https://example.com/a?a=1&b=2&c=3"},
		{"RepeatedNamesStable", "https://example.com/a?tag=z&b=1&tag=a", "https://example.com/a?b=1&tag=z&tag=a"},
		{"BareName", "https://example.com/a?print", "https://example.com/a?print="},
		{"QuerySpaces", "https://example.com/s?q=a%20b&r=c+d&s=e f", "https://example.com/s?q=a+b&r=c+d&s=e+f"},
		{"QueryPlusEscapeKept", "https://example.com/s?q=c%2B%2B", "https://example.com/s?q=c%2B%2B"},
		{"QueryAmpEscapeKept", "https://example.com/s?q=a%26b", "https://example.com/s?q=a%26b"},
		{"QueryBrackets", "https://example.com/s?a[]=1&a%5b%5d=2", "https://example.com/s?a%5B%5D=1&a%5B%5D=2"},
		{"Tracking", "https://example.com/a?utm_source=x&UTM_Medium=y&fbclid=1&gclid=2&id=7", "https://example.com/a?id=7"},
		{"OnlyTracking", "https://example.com/a/?utm_campaign=spring", "https://example.com/a"},
		{"FragmentDropped", "https://example.com/a#section-2", "https://example.com/a"},
		{"HashBangKept", "https://example.com/#!/jobs/1", "https://example.com/#!/jobs/1"},
		{"HashRouteKept", "https://example.com/app/#/jobs/1?x=1", "https://example.com/app#/jobs/1?x=1"},
		{"HashRouteRoot", "https://example.com/app#/", "https://example.com/app"},
		{"Whitespace", " \t https://example.com/a \n", "https://example.com/a"},
		{"InnerNewline", "https://exam\nple.com/a", "https://example.com/a"},
		{"NoBreakSpace", "\u00a0https://example.com/a\u00a0", "https://example.com/a"},
		{"Relative", "/relative/path/", "/relative/path/"},
		{"NotAURL", "not a url", "not a url"},
		{"Mailto", "mailto:Someone@Example.com", "mailto:Someone@Example.com"},
		{"Empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := URL(tc.in); got != tc.want {
				t.Fatalf("URL(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if again := URL(tc.want); again != tc.want {
				t.Fatalf("URL(%q) = %q: the canonical form is not stable", tc.want, again)
			}
		})
	}
}

// samePage lists pairs of deliveries of one page that must share a form.
var samePage = []struct{ name, a, b string }{
	{"Backslashes", `https://jobs.example\view\7`, "https://jobs.example/view/7"},
	{"UTM", "https://jobs.example/p/1?utm_source=twitter&utm_medium=social", "https://jobs.example/p/1"},
	{"Fbclid", "https://jobs.example/p/1?fbclid=IwAR3xyz", "https://jobs.example/p/1"},
	{"Gclid", "https://jobs.example/p/1?id=5&gclid=Cj0KCQ", "https://jobs.example/p/1?id=5"},
	{"Msclkid", "https://jobs.example/p/1?msclkid=abc&lang=de", "https://jobs.example/p/1?lang=de"},
	{"Mailchimp", "https://news.example/a?mc_cid=1&mc_eid=2", "https://news.example/a"},
	{"HubSpot", "https://news.example/a?_hsenc=p2A&_hsmi=99", "https://news.example/a"},
	{"GoogleAnalytics", "https://news.example/a?_ga=2.1.2&_gl=1*abc", "https://news.example/a"},
	{"TrailingSlash", "https://events.example/events/open-day/", "https://events.example/events/open-day"},
	{"ParamOrder", "https://shop.example/list?page=2&sort=price", "https://shop.example/list?sort=price&page=2"},
	{"HostCase", "https://Shop.Example/list", "https://shop.example/list"},
	{"DefaultPort", "https://shop.example:443/list", "https://shop.example/list"},
	{"Fragment", "https://shop.example/list#reviews", "https://shop.example/list"},
	{"EscapeCase", "https://shop.example/caf%c3%a9", "https://shop.example/caf%C3%A9"},
	{"IRI", "https://shop.example/café", "https://shop.example/caf%C3%A9"},
	{"IDN", "https://münchen.example/", "https://xn--mnchen-3ya.example/"},
	{"GoEscapedParens", "https://wiki.example/Foo_%28bar%29", "https://wiki.example/Foo_(bar)"},
	{"EmptyQuery", "https://shop.example/list?", "https://shop.example/list"},
	{"EmptyParams", "https://shop.example/list?a=1&&b=2", "https://shop.example/list?b=2&a=1"},
	{"FormSpace", "https://shop.example/s?q=red%20shoes", "https://shop.example/s?q=red+shoes"},
	{"DotSegments", "https://shop.example/a/../list", "https://shop.example/list"},
	{"Everything", " HTTPS://Shop.Example:443/a/./list/?utm_source=x&sort=price&page=2#top", "https://shop.example/a/list?page=2&sort=price"},
}

// otherPage lists pairs of different pages that must keep different forms.
var otherPage = []struct{ name, a, b string }{
	{"NonUTF8Hosts", "http://%A0.example/x", "http://%A1.example/x"},
	{"ID", "https://jobs.example/view?id=1", "https://jobs.example/view?id=2"},
	{"Page", "https://shop.example/list?page=1", "https://shop.example/list?page=2"},
	{"Language", "https://shop.example/item?lang=de", "https://shop.example/item?lang=en"},
	{"LanguageHl", "https://shop.example/item?hl=fr", "https://shop.example/item"},
	{"Search", "https://shop.example/s?q=red+shoes", "https://shop.example/s?q=blue+shoes"},
	{"SearchPlus", "https://shop.example/s?q=c%2B%2B", "https://shop.example/s?q=c"},
	{"Path", "https://jobs.example/p/1", "https://jobs.example/p/2"},
	{"PathCase", "https://jobs.example/Jobs", "https://jobs.example/jobs"},
	{"Host", "https://a.example/p/1", "https://b.example/p/1"},
	{"WWW", "https://www.example.com/p/1", "https://example.com/p/1"},
	{"Subdomain", "https://de.shop.example/item", "https://fr.shop.example/item"},
	{"Scheme", "http://shop.example/item", "https://shop.example/item"},
	{"Port", "https://shop.example:8443/item", "https://shop.example/item"},
	{"EncodedSlash", "https://shop.example/a%2Fb", "https://shop.example/a/b"},
	{"RepeatedOrder", "https://shop.example/r?rank=a&rank=b", "https://shop.example/r?rank=b&rank=a"},
	{"HashRoute", "https://app.example/#/jobs/1", "https://app.example/#/jobs/2"},
	{"HashBang", "https://app.example/#!/jobs/1", "https://app.example/"},
	{"Ref", "https://shop.example/item?ref=abc", "https://shop.example/item"},
	{"ParamValueEmpty", "https://shop.example/item?a=", "https://shop.example/item"},
}

func TestURLSamePage(t *testing.T) {
	for _, tc := range samePage {
		t.Run(tc.name, func(t *testing.T) {
			if a, b := URL(tc.a), URL(tc.b); a != b {
				t.Fatalf("same page, different forms:\n %q -> %q\n %q -> %q", tc.a, a, tc.b, b)
			}
		})
	}
}

func TestURLOtherPage(t *testing.T) {
	for _, tc := range otherPage {
		t.Run(tc.name, func(t *testing.T) {
			if a, b := URL(tc.a), URL(tc.b); a == b {
				t.Fatalf("different pages, one form %q:\n %q\n %q", a, tc.a, tc.b)
			}
		})
	}
}

func TestURLOptions(t *testing.T) {
	t.Run("Off", func(t *testing.T) {
		r := mustRules(t, URLOptions{Off: true})
		if got := r.Canonical("  HTTPS://X.example/a/?utm_source=x "); got != "HTTPS://X.example/a/?utm_source=x" {
			t.Fatalf("off: %q", got)
		}
	})
	t.Run("DropParams", func(t *testing.T) {
		r := mustRules(t, URLOptions{DropParams: []string{"ref", "pf_rd_*", "SessionID"}})
		got := r.Canonical("https://x.example/a?ref=home&pf_rd_p=1&PF_RD_r=2&sessionid=9&id=3&utm_source=x")
		if got != "https://x.example/a?id=3" {
			t.Fatalf("drop_params: %q", got)
		}
		if d := URL("https://x.example/a?ref=home"); d != "https://x.example/a?ref=home" {
			t.Fatalf("ref dropped by default: %q", d)
		}
	})
	t.Run("DropAll", func(t *testing.T) {
		r := mustRules(t, URLOptions{DropParams: []string{"*"}})
		if got := r.Canonical("https://x.example/a?b=1&c=2"); got != "https://x.example/a" {
			t.Fatalf("drop all: %q", got)
		}
	})
	t.Run("KeepParams", func(t *testing.T) {
		r := mustRules(t, URLOptions{KeepParams: []string{"ga_id"}})
		if got := r.Canonical("https://x.example/a?ga_id=4&ga_source=x"); got != "https://x.example/a?ga_id=4" {
			t.Fatalf("keep_params: %q", got)
		}
	})
	t.Run("KeepTrailingSlash", func(t *testing.T) {
		r := mustRules(t, URLOptions{KeepTrailingSlash: true})
		if a, b := r.Canonical("https://x.example/a/"), r.Canonical("https://x.example/a"); a == b {
			t.Fatalf("trailing slash folded: %q", a)
		}
		if got := r.Canonical("https://x.example"); got != "https://x.example/" {
			t.Fatalf("root: %q", got)
		}
	})
	t.Run("FoldWWW", func(t *testing.T) {
		r := mustRules(t, URLOptions{FoldWWW: true})
		if a, b := r.Canonical("https://www.x.example/a"), r.Canonical("https://x.example/a"); a != b {
			t.Fatalf("www not folded: %q %q", a, b)
		}
		if got := r.Canonical("https://www2.x.example/a"); got != "https://www2.x.example/a" {
			t.Fatalf("www2 folded: %q", got)
		}
	})
	t.Run("BadPatterns", func(t *testing.T) {
		for _, o := range []URLOptions{
			{DropParams: []string{""}},
			{DropParams: []string{"a*b"}},
			{DropParams: []string{"a=b"}},
			{KeepParams: []string{"x y"}},
			{DropParams: []string{"ref"}, KeepParams: []string{"REF"}},
		} {
			if _, err := NewURLRules(o); err == nil {
				t.Errorf("NewURLRules(%+v) accepted", o)
			}
		}
	})
}

func TestDefaultDropParamsValid(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range DefaultDropParams {
		if err := CheckParam(p); err != nil {
			t.Error(err)
		}
		if p != strings.ToLower(p) || seen[p] {
			t.Errorf("%q: names are lower-case and listed once", p)
		}
		seen[p] = true
	}
}

func BenchmarkURL(b *testing.B) {
	for _, bc := range []struct{ name, in string }{
		{"Plain", "https://jobs.example/posting/123456"},
		{"Tracking", "https://Jobs.Example:443/posting/123456/?utm_source=twitter&utm_medium=social&id=7&page=2#apply"},
		{"IDN", "https://bücher.example/straße?q=köln"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				URL(bc.in)
			}
		})
	}
}

func FuzzCanonicalURL(f *testing.F) {
	for _, s := range []string{
		"https://Example.com:443/a/../b/?utm_source=x&b=2&a=1#frag",
		"http://[::1]:80/", "%zz", "https://a/b?c=d", "https://bücher.example/ü?q=ä ö",
		"https://x.example/#!/a#b", "https://u:p@x.example:/a/./b/", "HTTP://www.X.example.:0080",
		"https://x%2Fy.example/", "https://[v1.x]/", "https://xn--zz.example/", "ftp://a@b@c/d",
		"A://%Ⓐ000000000000000", "http://%A0.example/x", `https://a.example\b\c?d\e`,
	} {
		f.Add(s)
	}
	rules := []*URLRules{
		defaultRules,
		mustRules(f, URLOptions{KeepTrailingSlash: true, FoldWWW: true, DropParams: []string{"a*", "b"}}),
		mustRules(f, URLOptions{Off: true}),
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range rules {
			c := r.Canonical(s)
			if again := r.Canonical(c); again != c {
				t.Fatalf("not stable: %q -> %q -> %q", s, c, again)
			}
			if utf8.ValidString(s) && !utf8.ValidString(c) {
				t.Fatalf("valid UTF-8 %q became invalid %q", s, c)
			}
			if e := schemeEnd(c); e > 0 && strings.HasPrefix(c[e+1:], "//") && !r.opts.Off {
				for i := 0; i < len(c); i++ {
					if c[i] >= utf8.RuneSelf || c[i] <= ' ' {
						t.Fatalf("canonical URL %q of %q has byte %#x", c, s, c[i])
					}
				}
			}
		}
	})
}
