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
		{"DefaultPortHTTP", "http://example.com:80/x", "https://example.com/x"},
		{"HTTPIsHTTPS", "http://example.com/x", "https://example.com/x"},
		{"DefaultPortHTTPS", "https://example.com:443/x", "https://example.com/x"},
		{"LeadingZeroPort", "https://example.com:0443/x", "https://example.com/x"},
		{"OtherPortKept", "https://example.com:8443/x", "https://example.com:8443/x"},
		{"HTTPOnPort443", "http://example.com:443/x", "https://example.com/x"},
		{"PortOfOtherScheme", "https://example.com:80/x", "https://example.com:80/x"},
		{"WSKept", "ws://example.com/x", "ws://example.com/x"},
		{"EmptyPort", "https://example.com:/x", "https://example.com/x"},
		{"EmptyUserinfo", "https://@example.com/x", "https://example.com/x"},
		{"UserinfoKept", "https://User:pw@example.com/x", "https://User:pw@example.com/x"},
		{"TrailingDot", "https://example.com./x", "https://example.com/x"},
		{"IDNAToASCII", "https://Bücher.example/", "https://xn--bcher-kva.example/"},
		{"PunycodeKept", "https://XN--BCHER-KVA.example/", "https://xn--bcher-kva.example/"},
		{"FullWidthDots", "https://例え。テスト/", "https://xn--r8jz45g.xn--zckzah/"},
		{"PercentHost", "https://ex%41mple.com/", "https://example.com/"},
		{"NonUTF8HostBytesKept", "https://%A0.Example/x", "https://%A0.example/x"},
		{"BackslashIsSlash", `http://example.com\jobs\1?q=a\b`, "https://example.com/jobs/1?q=a%5Cb"},
		{"IPv6", "http://[2001:DB8:0:0:0:0:0:1]:80/", "https://[2001:db8::1]/"},
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
		{"DirectoryIndex", "https://example.com/news/index.html", "https://example.com/news"},
		{"DirectoryIndexRoot", "https://example.com/index.php?p=12", "https://example.com/?p=12"},
		{"DirectoryIndexCase", "https://example.com/Careers/Default.aspx", "https://example.com/Careers"},
		{"DirectoryIndexTwice", "https://example.com/a/index.html/index.htm", "https://example.com/a"},
		{"DirectoryIndexThenSlash", "https://example.com/a/index.html/", "https://example.com/a"},
		{"NotAnIndex", "https://example.com/news/index", "https://example.com/news/index"},
		{"QueryAmpEntity", "https://example.com/s?q=nurse&amp;page=2&amp;amp;sort=new", "https://example.com/s?page=2&q=nurse&sort=new"},
		{"QueryNumericAmp", "https://example.com/?p=7&#038;preview=true&#x26;b=1#top", "https://example.com/?b=1&p=7&preview=true"},
		{"HashRouteNumericAmp", "https://example.com/#/r?a=1&#38;b", "https://example.com/#/r?a=1&%2338;b"},
		{"PlatformShare", "https://x.com/nasa/status/17?s=46&t=Yk3x&lang=en", "https://x.com/nasa/status/17?lang=en"},
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

	// One page over http and https: sites redirect one to the other, and
	// links, feeds and sitemaps written before the move keep http.
	{"Scheme", "http://www.bbc.example/news/world-68912345", "https://www.bbc.example/news/world-68912345"},
	{"SchemeCasePort", "HTTP://Jobs.Example:80/p/1", "https://jobs.example/p/1"},
	{"SchemeAndSlash", "http://uni.example/events/open-day/", "https://uni.example/events/open-day"},

	// A directory and its index file: Apache and nginx (index.html),
	// PHP front controllers (index.php with its query), IIS
	// (Default.aspx, default.htm), Tomcat (index.jsp), SSI (index.shtml).
	{"IndexHTML", "https://www.city.example/news/index.html", "https://www.city.example/news/"},
	{"IndexHTM", "https://www.city.example/index.htm", "https://www.city.example/"},
	{"IndexPHPQuery", "https://uni.example/jobs/index.php?id=17", "https://uni.example/jobs/?id=17"},
	{"WordPressFrontController", "https://blog.example/index.php?p=123", "https://blog.example/?p=123"},
	{"IISDefault", "https://council.example/Careers/Default.aspx", "https://council.example/Careers/"},
	{"IISDefaultHTM", "https://council.example/Careers/default.htm", "https://council.example/Careers"},
	{"TomcatWelcome", "https://portal.example/vacancies/index.jsp", "https://portal.example/vacancies"},
	{"SSI", "https://lab.example/about/index.shtml", "https://lab.example/about/"},
	{"IndexRoute", "https://app.example/index.html#/jobs/1", "https://app.example/#/jobs/1"},

	// Links read out of HTML without decoding: "&amp;" (and twice,
	// "&amp;amp;") between parameters, and WordPress's esc_url "&#038;".
	{"AmpEntity", "https://jobs.example/search?q=nurse&amp;location=leeds&amp;page=2", "https://jobs.example/search?q=nurse&location=leeds&page=2"},
	{"AmpEntityTwice", "https://jobs.example/search?q=nurse&amp;amp;page=2", "https://jobs.example/search?q=nurse&page=2"},
	{"WordPressEscURL", "https://blog.example/?p=123&#038;preview=true", "https://blog.example/?p=123&preview=true"},
	{"NumericAmp", "https://blog.example/list?a=1&#38;b=2&#x26;c=3", "https://blog.example/list?a=1&b=2&c=3"},

	// X/Twitter: embedded tweets and share buttons tag every link with
	// ref_src (and ref_url, the embedding page); shares from the app add
	// s and t to the tweet's own URL.
	{"TweetEmbedLink", "https://news.example/2024/05/story?ref_src=twsrc%5Etfw", "https://news.example/2024/05/story"},
	{"TweetEmbedLinkLong", "https://news.example/story?ref_src=twsrc%5Egoogle%7Ctwcamp%5Eserp%7Ctwgr%5Eauthor&id=4", "https://news.example/story?id=4"},
	{"TweetEmbed", "https://twitter.com/NASA/status/1790000000000000000?ref_src=twsrc%5Etfw%7Ctwcamp%5Etweetembed%7Ctwterm%5E1790&ref_url=https%3A%2F%2Fnews.example%2Fa", "https://twitter.com/NASA/status/1790000000000000000"},
	{"XShare", "https://x.com/NASA/status/1790000000000000000?s=46&t=Yk3xQ2Wv9L0aBcDeFgHiJk", "https://x.com/NASA/status/1790000000000000000"},
	{"XShareMobile", "https://mobile.twitter.com/NASA/status/1790?s=20", "https://mobile.twitter.com/NASA/status/1790"},

	// Other platforms' share links.
	{"YouTubeShort", "https://youtu.be/dQw4w9WgXcQ?si=Ab12Cd34Ef56Gh78", "https://youtu.be/dQw4w9WgXcQ"},
	{"YouTubeWatch", "https://www.youtube.com/watch?v=dQw4w9WgXcQ&feature=share&pp=ygUJcmlja3JvbGw%3D", "https://www.youtube.com/watch?v=dQw4w9WgXcQ"},
	{"LinkedInJob", "https://www.linkedin.com/jobs/view/3912345678/?refId=8a1fQ%3D%3D&trackingId=Zx9%2FkQ%3D%3D&trk=public_jobs_topcard-title", "https://www.linkedin.com/jobs/view/3912345678"},
	{"LinkedInJobCountry", "https://uk.linkedin.com/jobs/view/3912345678?trk=public_jobs_jobs-search-result_search-card&position=1&pageNum=0", "https://uk.linkedin.com/jobs/view/3912345678?pageNum=0&position=1"},
	{"LinkedInPost", "https://www.linkedin.com/posts/acme_hiring-activity-7190-abc?utm_source=share&utm_medium=member_desktop&rcm=ACoAAB", "https://www.linkedin.com/posts/acme_hiring-activity-7190-abc"},
	{"FacebookApp", "https://news.example/a/b?mibextid=Zxz2cZ", "https://news.example/a/b"},
	{"FacebookPost", "https://www.facebook.com/story.php?story_fbid=123&id=456&mibextid=Nif5oz&__cft__[0]=AZX9&__tn__=%2CO%2CP-R", "https://www.facebook.com/story.php?id=456&story_fbid=123"},
	{"TikTok", "https://www.tiktok.com/@acme/video/7312345678901234567?is_from_webapp=1&sender_device=pc&web_id=7312&_r=1&_t=8iWxAbC", "https://www.tiktok.com/@acme/video/7312345678901234567"},
	{"Reddit", "https://www.reddit.com/r/jobs/comments/1abcde/title/?share_id=Xy1Z&utm_content=2&utm_medium=ios_app&utm_name=ioscss&utm_source=share&utm_term=1", "https://www.reddit.com/r/jobs/comments/1abcde/title"},
	{"Spotify", "https://open.spotify.com/episode/4rOoJ6Egrf8K2IrywzwOMk?si=1a2b3c4d5e6f", "https://open.spotify.com/episode/4rOoJ6Egrf8K2IrywzwOMk"},
	{"Pinterest", "https://shop.example/item/5?epik=dj0yJnU9", "https://shop.example/item/5"},
	{"Yahoo", "https://finance.yahoo.com/news/stocks-rally-123.html?guccounter=1&guce_referrer=aHR0cHM6Ly93d3cuZ29vZ2xlLmNvbS8&guce_referrer_sig=AQAAAJ", "https://finance.yahoo.com/news/stocks-rally-123.html"},
	{"MSN", "https://www.msn.com/en-us/news/world/story/ar-AA1abc?ocid=msedgntp&pc=U531&cvid=1f2e3d&ei=12", "https://www.msn.com/en-us/news/world/story/ar-AA1abc"},
	{"Medium", "https://medium.com/@author/title-abc123?source=rss----5517fd7b58a6---4", "https://medium.com/@author/title-abc123"},
	{"Substack", "https://acme.substack.com/p/post-slug?r=2abc&utm_campaign=post&utm_medium=web&triedRedirect=true", "https://acme.substack.com/p/post-slug"},
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
	{"OtherSchemes", "ftp://shop.example/item", "https://shop.example/item"},
	{"WebSocketSchemes", "ws://shop.example/item", "wss://shop.example/item"},
	{"OtherPortOverHTTP", "http://shop.example:8080/item", "https://shop.example/item"},
	{"NotAnIndexName", "https://shop.example/news/index", "https://shop.example/news"},
	{"IndexLikeName", "https://shop.example/news/index2.html", "https://shop.example/news"},
	{"IndexNotLast", "https://shop.example/index.php/jobs/12", "https://shop.example/jobs/12"},
	{"OtherPageInDirectory", "https://shop.example/news/article.html", "https://shop.example/news"},
	{"EncodedAmpInValue", "https://shop.example/s?q=a%26b", "https://shop.example/s?q=a&b"},
	// Short share names mean something off the platform: WordPress's
	// search (s), a start time (t), a site id (si), a section (source).
	{"WordPressSearch", "https://blog.example/?s=nurse", "https://blog.example/?s=teacher"},
	{"SearchOffPlatform", "https://blog.example/?s=nurse", "https://blog.example/"},
	{"TimeOffPlatform", "https://video.example/v/1?t=60", "https://video.example/v/1"},
	{"SourceOffPlatform", "https://news.example/a?source=rss", "https://news.example/a"},
	{"HostOnlyEndsLikeX", "https://notx.com/a?s=1", "https://notx.com/a?s=2"},
	{"HostStartsLikeX", "https://x.com.example/a?s=1", "https://x.com.example/a?s=2"},
	{"PlatformIDs", "https://www.youtube.com/watch?v=a1", "https://www.youtube.com/watch?v=b2"},
	{"YouTubeStartTime", "https://www.youtube.com/watch?v=a1&t=42s", "https://www.youtube.com/watch?v=a1"},
	{"XSearch", "https://x.com/search?q=jobs", "https://x.com/search?q=news"},
	{"LinkedInJobs", "https://www.linkedin.com/jobs/view/3912345678", "https://www.linkedin.com/jobs/view/3912345679"},
	{"LinkedInSearchPage", "https://www.linkedin.com/jobs/search?keywords=nurse&start=25", "https://www.linkedin.com/jobs/search?keywords=nurse&start=50"},
	{"FacebookStory", "https://www.facebook.com/story.php?story_fbid=123&id=456", "https://www.facebook.com/story.php?story_fbid=124&id=456"},
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
	t.Run("KeepScheme", func(t *testing.T) {
		r := mustRules(t, URLOptions{KeepScheme: true})
		if a, b := r.Canonical("http://x.example/a"), r.Canonical("https://x.example/a"); a == b || a != "http://x.example/a" {
			t.Fatalf("scheme folded: %q %q", a, b)
		}
		if got := r.Canonical("http://x.example:443/a"); got != "http://x.example:443/a" {
			t.Fatalf("port 443 over http: %q", got)
		}
	})
	t.Run("KeepDirectoryIndex", func(t *testing.T) {
		r := mustRules(t, URLOptions{KeepDirectoryIndex: true})
		if a, b := r.Canonical("https://x.example/news/index.html"), r.Canonical("https://x.example/news/"); a == b || a != "https://x.example/news/index.html" {
			t.Fatalf("index folded: %q %q", a, b)
		}
	})
	t.Run("DirectoryIndexKeepsSlash", func(t *testing.T) {
		r := mustRules(t, URLOptions{KeepTrailingSlash: true})
		if a, b := r.Canonical("https://x.example/news/index.html"), r.Canonical("https://x.example/news/"); a != b || a != "https://x.example/news/" {
			t.Fatalf("index with the slash kept: %q %q", a, b)
		}
		if a := r.Canonical("https://x.example/news/index.html/"); a != "https://x.example/news/index.html/" {
			t.Fatalf("a directory named index.html: %q", a)
		}
	})
	t.Run("KeepParamsExemptsPlatform", func(t *testing.T) {
		r := mustRules(t, URLOptions{KeepParams: []string{"s"}})
		if got := r.Canonical("https://x.com/a/status/1?s=20&t=x"); got != "https://x.com/a/status/1?s=20" {
			t.Fatalf("keep_params on a platform host: %q", got)
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

func TestPlatformDropParamsValid(t *testing.T) {
	for host, names := range PlatformDropParams {
		if host != strings.ToLower(host) || URL("https://"+host+"/") != "https://"+host+"/" {
			t.Errorf("platform host %q is not canonical", host)
		}
		seen := map[string]bool{}
		for _, p := range names {
			if err := CheckParam(p); err != nil {
				t.Errorf("%s: %v", host, err)
			}
			if p != strings.ToLower(p) || seen[p] {
				t.Errorf("%s: %q: names are lower-case and listed once", host, p)
			}
			seen[p] = true
		}
	}
}

func TestIndexNamesValid(t *testing.T) {
	for _, n := range IndexNames {
		if n != strings.ToLower(n) || !isIndexName([]byte(strings.ToUpper(n))) {
			t.Errorf("index name %q: names are lower-case and match in any case", n)
		}
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
		"http://x.example:443/a/index.html/", "https://x.example/?a=1&amp;amp;b=2&#038;c=3#/r?d&#38;e",
		"https://www.linkedin.com/jobs/view/1/?trk=a&refId=b", "https://x.com/a?s=1&t=2&q=3",
	} {
		f.Add(s)
	}
	rules := []*URLRules{
		defaultRules,
		mustRules(f, URLOptions{KeepTrailingSlash: true, FoldWWW: true, DropParams: []string{"a*", "b"}}),
		mustRules(f, URLOptions{KeepScheme: true, KeepDirectoryIndex: true, KeepParams: []string{"s", "trk*"}}),
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
