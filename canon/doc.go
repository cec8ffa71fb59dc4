// Package canon computes the canonical forms crawlkeeper builds dedup keys
// from: URLs (URLRules.Canonical, URL) and titles (TitleOptions.Title,
// Title). Two deliveries
// of the same page under different spellings get the same canonical form;
// pages that differ in anything meaningful (path, host, an id, a page
// number, a language, a search query) keep different forms. The forms are
// for identity only, never for fetching: the stored item keeps the URL the
// crawler sent.
//
// It is pure logic on the standard library, golang.org/x/net/idna (host
// names to ASCII) and golang.org/x/text (NFKC and case folding), so the
// domain package can import it.
//
// # Why not purell
//
// github.com/PuerkitoBio/purell was the obvious library (it is served by
// the module proxy), but it is archived upstream, and the rules that matter
// most here are not among its flags: removing tracking parameters by name
// and by prefix, keeping "#!" and "#/" routes while dropping other
// fragments, per-source settings, and a guarantee that any string, however
// hostile, yields a stable form without an error. It needs url.Parse to
// succeed first (which rejects, for example, a stray '%'), and its query
// sorting goes through url.Values, which silently drops a parameter whose
// escapes are invalid and re-encodes every name and value. The rules below
// are a few hundred lines on RFC 3986, so this package implements them
// itself and tests each one (url_test.go, FuzzCanonicalURL).
//
// # The URL rules
//
// Following RFC 3986 section 6 (syntax-based normalisation), the WHATWG URL
// standard, w3lib's canonicalize_url and npm's normalize-url:
//
//   - Leading and trailing white space and control characters are trimmed,
//     and tabs and newlines inside are removed (WHATWG).
//   - Only URLs with a scheme and an authority ("scheme://host...") are
//     canonicalised; anything else (relative paths, "mailto:", free text)
//     is only trimmed, so it still yields a stable key.
//   - Scheme and host are lower-cased, and http is written https: sites
//     serve one page both ways (and redirect one to the other), while
//     links, feeds and sitemaps keep whichever they were written with.
//     Per source the two can be kept apart (URLOptions.KeepScheme). Other
//     schemes stay as they are. Host names are converted to ASCII
//     (IDNA, UTS #46 non-transitional, as browsers do), so "bücher.example"
//     and "xn--bcher-kva.example" are one host; the ASCII form is the one
//     DNS, HTTP and most crawlers use. A trailing dot is removed. IPv6
//     literals are written in their RFC 5952 form.
//   - "www." is not removed by default: a different host is a different
//     site unless the source says otherwise (URLOptions.FoldWWW), unlike
//     normalize-url, whose default removes it.
//   - Default ports (http 80, https 443, ws 80, wss 443, ftp 21) and empty
//     user information are dropped; an http URL written https drops both
//     80 and 443.
//   - Percent-encoding: hex digits are upper-cased; a '%' that starts no
//     escape becomes "%25"; characters that may not appear literally
//     (space, quotes, brackets, non-ASCII bytes as UTF-8) are encoded. In
//     the path, escapes of unreserved characters and of sub-delimiters,
//     ':' and '@' are decoded (servers decode the path before routing, and
//     crawlers differ here: Go's net/url writes "%28" where browsers and
//     Scrapy write "("), while "%2F", "%3F", "%23" and "%25" stay encoded
//     because decoding them changes the structure. In the query only
//     unreserved characters and those that carry no form meaning are
//     decoded; '&', '=', '+' and ';' keep their encoded or literal form,
//     and a space ("%20", "+" or a literal one) is written "+", as
//     w3lib does.
//   - Dot segments are resolved (RFC 3986 section 5.2.4), an empty path is
//     "/", and a trailing slash is removed except for the root "/" (per
//     source it can be kept: URLOptions.KeepTrailingSlash).
//   - A last path segment that names a directory's index file (IndexNames:
//     index.html, index.php, Default.aspx, ... in any letter case) is
//     removed, so "/news/index.html" is "/news/" (per source it can be
//     kept: URLOptions.KeepDirectoryIndex).
//   - Query: an ampersand left as an HTML reference by a crawler that did
//     not decode the link ("a=1&amp;b=2", twice "&amp;amp;", WordPress's
//     "&#038;") separates parameters like "&"; empty parameters ("&&", a
//     lone "?") are removed, "a" is written "a=", tracking parameters are
//     removed (DefaultDropParams, the share parameters of the URL's
//     platform in PlatformDropParams, plus the source's own), and the rest
//     are sorted by name; repeated names keep their order, because
//     "tag=a&tag=b" may mean a ranking.
//   - The fragment is removed, except hash-bang and hash routes of
//     single-page applications ("#!/jobs/1", "#/jobs/1"), which name the
//     page; a bare "#/", "#!" or "#!/" is the root and is removed.
//
// Canonical forms of URLs are ASCII. Canonicalising a canonical form
// returns it unchanged, and no input panics (FuzzCanonicalURL).
package canon

// Version is the version of the rules in this package. Bump it whenever the
// canonical form of any input changes, so stores whose keys were built
// under the old rules can tell (crawlkeeper.KeyRulesFingerprint).
//
// Version 3: http is written https, a directory's index file is the
// directory, "&amp;" and "&#038;" between query parameters are "&", share
// parameters of big platforms are dropped (PlatformDropParams, and ref_src,
// ref_url and a few more in DefaultDropParams), and titles decode HTML
// character references and compare typographic quotes and dashes as ASCII
// ones.
const Version = 3
