package canon

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// URLOptions are one source's URL rules. The zero value is the default:
// canonical, the default tracking parameters dropped, trailing slash
// folded, "www." kept.
type URLOptions struct {
	// Off turns canonicalisation off: the URL is only trimmed of white
	// space, so only byte-identical URLs are the same page.
	Off bool
	// DropParams are query parameters to drop besides DefaultDropParams:
	// exact names, or prefixes written "name_*". A lone "*" drops every
	// parameter (the path alone names a page). Compared without regard to
	// ASCII case.
	DropParams []string
	// KeepParams exempts parameters from DefaultDropParams for this source,
	// written like DropParams (for a site where, say, "ga_id" names a page).
	KeepParams []string
	// KeepTrailingSlash keeps "/a/" and "/a" apart.
	KeepTrailingSlash bool
	// FoldWWW treats "www.example.com" as "example.com".
	FoldWWW bool
	// KeepScheme keeps "http://" and "https://" apart; by default an http
	// URL is written https, as one page served both ways.
	KeepScheme bool
	// KeepDirectoryIndex keeps "/news/index.html" and "/news/" apart; by
	// default a last path segment that is a directory index name
	// (IndexNames) is removed.
	KeepDirectoryIndex bool
}

// URLRules canonicalises URLs under one source's options. It is safe for
// concurrent use.
type URLRules struct {
	opts URLOptions
	drop paramSet
	keep paramSet
}

// paramSet matches parameter names: exact (lower-case) names and prefixes.
type paramSet struct {
	exact    map[string]bool
	prefixes []string
	all      bool
}

func (s *paramSet) add(pattern string) {
	p := strings.ToLower(pattern)
	switch {
	case p == "*":
		s.all = true
	case strings.HasSuffix(p, "*"):
		s.prefixes = append(s.prefixes, strings.TrimSuffix(p, "*"))
	default:
		if s.exact == nil {
			s.exact = map[string]bool{}
		}
		s.exact[p] = true
	}
}

// match reports whether the lower-cased name is in the set.
func (s *paramSet) match(name []byte) bool {
	if s.all || s.exact[string(name)] {
		return true
	}
	for _, p := range s.prefixes {
		if len(name) >= len(p) && string(name[:len(p)]) == p {
			return true
		}
	}
	return false
}

// CheckParam reports whether pattern is a valid drop or keep pattern: a
// non-empty name without '&', '=', '#' or white space, optionally ending in
// one '*'.
func CheckParam(pattern string) error {
	if pattern == "" {
		return fmt.Errorf("empty parameter name")
	}
	body := strings.TrimSuffix(pattern, "*")
	if strings.Contains(body, "*") {
		return fmt.Errorf("parameter %q: '*' may only end a name (\"prefix_*\")", pattern)
	}
	if i := strings.IndexAny(body, "&=#? \t\r\n"); i >= 0 {
		return fmt.Errorf("parameter %q: a name cannot contain %q", pattern, body[i])
	}
	return nil
}

// NewURLRules checks o and returns its rules.
func NewURLRules(o URLOptions) (*URLRules, error) {
	r := &URLRules{opts: o}
	keep := map[string]bool{}
	for _, p := range o.KeepParams {
		if err := CheckParam(p); err != nil {
			return nil, fmt.Errorf("keep_params: %w", err)
		}
		keep[strings.ToLower(p)] = true
		r.keep.add(p)
	}
	for _, p := range o.DropParams {
		if err := CheckParam(p); err != nil {
			return nil, fmt.Errorf("drop_params: %w", err)
		}
		if keep[strings.ToLower(p)] {
			return nil, fmt.Errorf("parameter %q is in both drop_params and keep_params: keep it in one", p)
		}
		r.drop.add(p)
	}
	for _, p := range DefaultDropParams {
		r.drop.add(p)
	}
	return r, nil
}

var defaultRules, _ = NewURLRules(URLOptions{})

// URL returns the canonical form of raw under the default rules.
func URL(raw string) string { return defaultRules.Canonical(raw) }

// Options returns the options the rules were made from.
func (r *URLRules) Options() URLOptions { return r.opts }

// Canonical returns the canonical form of raw (see the package
// documentation for the rules). It never fails: a string that is not an
// absolute URL with a host comes back trimmed.
func (r *URLRules) Canonical(raw string) string {
	if r.opts.Off {
		return trimControl(raw)
	}
	// Tabs and line breaks go first (as browsers drop them anywhere in a
	// URL), then the ends are trimmed: the other order could join bytes
	// into a space that a second pass would trim.
	s := raw
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	}
	s = trimControl(s)
	colon := schemeEnd(s)
	if colon < 0 {
		return s
	}
	scheme := strings.ToLower(s[:colon])
	outScheme := scheme
	if scheme == "http" && !r.opts.KeepScheme {
		outScheme = "https"
	}
	if specialSchemes[scheme] {
		// Browsers read a backslash before the query as a slash in
		// http(s) and the other special schemes (WHATWG URL), so
		// `http://example.com\jobs\1` is `http://example.com/jobs/1`.
		q := strings.IndexAny(s, "?#")
		if q < 0 {
			q = len(s)
		}
		if strings.IndexByte(s[:q], '\\') >= 0 {
			s = strings.ReplaceAll(s[:q], "\\", "/") + s[q:]
		}
	}
	if !strings.HasPrefix(s[colon+1:], "//") {
		return s
	}
	rest := s[colon+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, rest := rest[:end], rest[end:]
	rest = decodeQueryAmpersands(rest)
	var path, query, frag string
	hasFrag := false
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest, frag, hasFrag = rest[:i], rest[i+1:], true
	}
	hasQuery := false
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest, query, hasQuery = rest[:i], rest[i+1:], true
	}
	path = rest

	var buf [256]byte
	b := buf[:0]
	b = append(b, outScheme...)
	b = append(b, "://"...)
	hostStart := len(b)
	b = r.appendAuthority(b, scheme, outScheme, authority)
	host := hostOf(b[hostStart:])
	b = r.appendPath(b, path)
	if hasQuery {
		b = r.appendQuery(b, query, host)
	}
	if hasFrag {
		b = appendFragment(b, frag)
	}
	if string(b) == s {
		return s // already canonical: no copy
	}
	return string(b)
}

// decodeQueryAmpersands writes "&" for the numeric references to an
// ampersand ("&#038;", "&#38;", "&#x26;") in the query of rest (path,
// query and fragment), which a crawler leaves in when it reads a link out
// of HTML without decoding it: WordPress's esc_url writes every ampersand
// of a link as "&#038;". Left alone, its '#' would cut the query short as
// a fragment. Only the query is read: from the first '?' to the first '#'
// that starts no such reference.
func decodeQueryAmpersands(rest string) string {
	q := strings.IndexByte(rest, '?')
	if q < 0 || !strings.Contains(rest[q:], "&#") || strings.IndexByte(rest[:q], '#') >= 0 {
		return rest
	}
	var out []byte
	last := 0
	for i := q; i < len(rest); i++ {
		if rest[i] != '#' {
			continue
		}
		n := 0
		if i > 0 && rest[i-1] == '&' {
			n = ampersandRef(rest[i:])
		}
		if n == 0 {
			break // the fragment
		}
		// rest[i-1:i+n] is the reference; the '&' before it stays.
		out = append(out, rest[last:i]...)
		last = i + n
		i += n - 1
	}
	if out == nil {
		return rest
	}
	return string(append(out, rest[last:]...))
}

// ampersandRef returns the length of "#38;" or "#x26;" (any number of
// leading zeros, either case of x) at the start of s, or 0.
func ampersandRef(s string) int {
	i, base := 1, 10
	if i < len(s) && (s[i] == 'x' || s[i] == 'X') {
		i, base = 2, 16
	}
	for i < len(s) && s[i] == '0' {
		i++
	}
	want := "38"
	if base == 16 {
		want = "26"
	}
	if !strings.HasPrefix(s[i:], want+";") {
		return 0
	}
	return i + len(want) + 1
}

// trimControl trims white space and C0 control characters at both ends
// (WHATWG trims C0 controls and space; Unicode spaces are trimmed too,
// because scraped URLs carry no-break spaces from HTML).
func trimControl(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return r <= ' ' || r == 0x7f || r == 0x85 || r == 0xa0 || r == 0x2028 || r == 0x2029 || r == 0xfeff || (r >= 0x2000 && r <= 0x200b) || r == 0x3000
	})
}

// schemeEnd returns the index of the colon that ends a valid scheme
// (ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )), or -1.
func schemeEnd(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9', c == '+', c == '-', c == '.':
			if i == 0 {
				return -1
			}
		case c == ':':
			if i == 0 {
				return -1
			}
			return i
		default:
			return -1
		}
	}
	return -1
}

var defaultPorts = map[string]string{"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21"}

// hostOf returns the host of a canonical authority: without user
// information and port (nil for an IP literal in brackets).
func hostOf(authority []byte) []byte {
	if at := bytes.LastIndexByte(authority, '@'); at >= 0 {
		authority = authority[at+1:]
	}
	if len(authority) > 0 && authority[0] == '[' {
		return nil
	}
	if i := bytes.LastIndexByte(authority, ':'); i >= 0 {
		authority = authority[:i]
	}
	return authority
}

// appendAuthority writes the authority; the port is dropped when it is the
// default of the scheme written (outScheme) or of the scheme given, so
// that "http://x:80" written https has no port, and the form is stable.
func (r *URLRules) appendAuthority(b []byte, scheme, outScheme, a string) []byte {
	if at := strings.LastIndexByte(a, '@'); at >= 0 {
		if user := a[:at]; user != "" && user != ":" {
			b = appendEscaped(b, user, userLiteral, userDecode)
			b = append(b, '@')
		}
		a = a[at+1:]
	}
	host, port := a, ""
	if strings.HasPrefix(a, "[") {
		if i := strings.IndexByte(a, ']'); i >= 0 && (i == len(a)-1 || a[i+1] == ':' && allDigits(a[i+2:])) {
			host = a[:i+1]
			if i < len(a)-1 {
				port = a[i+2:]
			}
			return appendPort(appendIPv6(b, host), scheme, outScheme, port)
		}
	} else if i := strings.LastIndexByte(a, ':'); i >= 0 && allDigits(a[i+1:]) {
		host, port = a[:i], a[i+1:]
	}
	b = r.appendHost(b, host)
	return appendPort(b, scheme, outScheme, port)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func appendPort(b []byte, scheme, outScheme, port string) []byte {
	if p := strings.TrimLeft(port, "0"); p != "" || port == "" {
		port = p
	} else {
		port = "0"
	}
	if port == "" || defaultPorts[scheme] == port || defaultPorts[outScheme] == port {
		return b
	}
	return append(append(b, ':'), port...)
}

func appendIPv6(b []byte, host string) []byte {
	inner := host[1 : len(host)-1]
	if a, err := netip.ParseAddr(inner); err == nil && a.Zone() == "" {
		b = append(b, '[')
		b = append(b, a.String()...)
		return append(b, ']')
	}
	b = append(b, '[')
	b = appendEscaped(b, strings.ToLower(inner), hostLiteral|ipv6Literal, 0)
	return append(b, ']')
}

// lookup converts host names to ASCII as the WHATWG URL standard does:
// UTS #46 non-transitional mapping, no STD3 restriction (underscores occur
// in real host names), no hyphen checks.
var lookup = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.Transitional(false),
	idna.StrictDomainName(false), idna.CheckHyphens(false))

func (r *URLRules) appendHost(b []byte, host string) []byte {
	if strings.IndexByte(host, '%') >= 0 {
		host = unescapeAll(host)
		// A '%' left is a literal one: written as %25, it cannot join
		// the bytes after it into an escape on the next pass.
		host = strings.ReplaceAll(host, "%", "%25")
	}
	ascii := true
	for i := 0; i < len(host); i++ {
		if host[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	// Lower-casing first makes the result the same whether or not the
	// name is valid IDNA: an invalid one stays lower-cased and
	// percent-encoded, and comes back the same when canonicalised again.
	// Bytes that are not UTF-8 are kept as they are (strings.ToLower would
	// turn each into U+FFFD, and two different hosts into one).
	if utf8.ValidString(host) {
		host = strings.ToLower(host)
	} else {
		host = asciiLower(host)
	}
	if !ascii && utf8.ValidString(host) {
		if h, err := lookup.ToASCII(host); err == nil {
			host = h
		}
	}
	host = strings.TrimRight(host, ".")
	for r.opts.FoldWWW && strings.HasPrefix(host, "www.") && len(host) > 4 {
		host = host[4:]
	}
	return appendEscaped(b, host, hostLiteral, 0)
}

// specialSchemes are the WHATWG URL standard's special schemes, whose
// backslashes before the query are slashes.
var specialSchemes = map[string]bool{"http": true, "https": true, "ws": true, "wss": true, "ftp": true, "file": true}

// asciiLower lower-cases the ASCII letters of s and leaves every other
// byte as it is.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// unescapeAll decodes every valid %XX escape of s.
func unescapeAll(s string) string {
	var sb strings.Builder
	sb.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			sb.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

func (r *URLRules) appendPath(b []byte, path string) []byte {
	start := len(b)
	if path == "" || path[0] != '/' {
		b = append(b, '/')
	}
	b = appendEscaped(b, path, pathLiteral, pathDecode)
	if bytes.Contains(b[start:], []byte("/.")) {
		b = append(b[:start], removeDotSegments(string(b[start:]))...)
	}
	b = r.foldTrailingSlash(b, start)
	if !r.opts.KeepDirectoryIndex {
		// "/a/index.html/index.html" takes two rounds; each removes a
		// segment, so this ends.
		for {
			i := bytes.LastIndexByte(b[start:], '/')
			if !isIndexName(b[start+i+1:]) {
				break
			}
			b = r.foldTrailingSlash(b[:start+i+1], start)
		}
	}
	return b
}

// foldTrailingSlash removes the trailing slashes of the path b[start:],
// but not the root's, unless the source keeps them.
func (r *URLRules) foldTrailingSlash(b []byte, start int) []byte {
	if !r.opts.KeepTrailingSlash {
		for len(b)-start > 1 && b[len(b)-1] == '/' {
			b = b[:len(b)-1]
		}
	}
	return b
}

// IndexNames are the file names web servers serve for a directory's own
// URL (Apache's and nginx's DirectoryIndex, IIS's default documents,
// Tomcat's welcome files, PHP, ColdFusion and server-side include
// front pages), so "/news/index.html" is "/news/". Compared without regard
// to ASCII case (IIS serves "Default.aspx").
var IndexNames = []string{
	"index.html", "index.htm", "index.shtml", "index.xhtml",
	"index.php", "index.asp", "index.aspx", "index.jsp", "index.cfm",
	"default.html", "default.htm", "default.asp", "default.aspx",
}

// isIndexName reports whether a path segment is one of IndexNames.
func isIndexName(seg []byte) bool {
	if len(seg) < len("index.htm") || len(seg) > len("default.aspx") {
		return false
	}
	for _, n := range IndexNames {
		if asciiEqualFold(n, seg) {
			return true
		}
	}
	return false
}

// asciiEqualFold reports whether b is s up to ASCII letter case.
func asciiEqualFold(s string, b []byte) bool {
	if len(s) != len(b) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// removeDotSegments is RFC 3986 section 5.2.4 on an absolute path.
func removeDotSegments(p string) string {
	segs := strings.Split(p[1:], "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	return "/" + strings.Join(out, "/")
}

// param is a query parameter: its normalised name and value are
// scratch[ns:vs] and scratch[vs:end].
type param struct{ ns, vs, end int }

func (r *URLRules) appendQuery(b []byte, q string, host []byte) []byte {
	var pbuf [16]param
	var sbuf [256]byte
	params, scratch := pbuf[:0], sbuf[:0]
	platform := platformFor(host)
	for q != "" {
		var part string
		if i := strings.IndexByte(q, '&'); i >= 0 {
			part, q = q[:i], q[i+1:]
		} else {
			part, q = q, ""
		}
		// "a=1&amp;b=2" is "a=1&b=2" with the ampersand left escaped by
		// a crawler that read the link out of HTML without decoding it
		// (twice escaped: "&amp;amp;"). No site names a parameter
		// "amp;b".
		for len(part) >= 4 && asciiEqualFold("amp;", []byte(part[:4])) {
			part = part[4:]
		}
		if part == "" {
			continue
		}
		name, value := part, ""
		if i := strings.IndexByte(part, '='); i >= 0 {
			name, value = part[:i], part[i+1:]
		}
		ns := len(scratch)
		scratch = appendEscaped(scratch, name, queryLiteral, queryDecode)
		if r.dropped(scratch[ns:], platform) {
			scratch = scratch[:ns]
			continue
		}
		vs := len(scratch)
		scratch = appendEscaped(scratch, value, queryLiteral, queryDecode)
		params = append(params, param{ns, vs, len(scratch)})
	}
	if len(params) == 0 {
		return b
	}
	// Insertion sort: stable, and queries have few parameters.
	name := func(p param) []byte { return scratch[p.ns:p.vs] }
	for i := 1; i < len(params); i++ {
		for j := i; j > 0 && bytes.Compare(name(params[j]), name(params[j-1])) < 0; j-- {
			params[j], params[j-1] = params[j-1], params[j]
		}
	}
	b = append(b, '?')
	for i, p := range params {
		if i > 0 {
			b = append(b, '&')
		}
		b = append(b, scratch[p.ns:p.vs]...)
		b = append(b, '=')
		b = append(b, scratch[p.vs:p.end]...)
	}
	return b
}

// dropped reports whether the parameter with the (normalised) name is
// removed: names are compared decoded and lower-cased. platform is the
// share and tracking parameters of the URL's host (PlatformDropParams),
// or nil.
func (r *URLRules) dropped(name []byte, platform *paramSet) bool {
	var buf [64]byte
	n := buf[:0]
	if bytes.IndexByte(name, '%') >= 0 {
		n = append(n, unescapeAll(string(name))...)
	} else {
		n = append(n, name...)
	}
	for i, c := range n {
		if 'A' <= c && c <= 'Z' {
			n[i] = c + 'a' - 'A'
		}
	}
	if r.keep.match(n) {
		return false
	}
	return r.drop.match(n) || platform != nil && platform.match(n)
}

// appendFragment keeps hash-bang and hash routes ("#!/a", "#/a") and
// drops every other fragment, including the bare route roots.
func appendFragment(b []byte, frag string) []byte {
	if frag == "" || frag[0] != '!' && frag[0] != '/' || frag == "/" || frag == "!" || frag == "!/" {
		return b
	}
	b = append(b, '#')
	return appendEscaped(b, frag, fragLiteral, fragDecode)
}

// Character classes for percent-encoding, one bit per class.
const (
	unreserved  = 1 << iota // ALPHA DIGIT - . _ ~
	subDelim                // ! $ & ' ( ) * + , ; =
	colonAt                 // : @
	slashQ                  // / ?
	ipv6Literal             // : (inside brackets)
	formSpecial             // & = + ;  (carry form meaning in a query)
)

// Literal sets (characters written as they are) and decode sets (escapes
// written as the character), per component.
const (
	hostLiteral  = unreserved | subDelim
	userLiteral  = unreserved | subDelim | colonAt
	userDecode   = unreserved
	pathLiteral  = unreserved | subDelim | colonAt | slashQ
	pathDecode   = unreserved | subDelim | colonAt
	queryLiteral = unreserved | subDelim | colonAt | slashQ
	queryDecode  = unreserved | subDelim | colonAt | slashQ | queryNoForm
	fragLiteral  = unreserved | subDelim | colonAt | slashQ
	fragDecode   = unreserved | subDelim | colonAt | slashQ
	// queryNoForm marks the decode set of a query: form-special
	// characters are excluded below, in appendEscaped.
	queryNoForm = formSpecial
)

var classes [256]uint8

func init() {
	for c := 'a'; c <= 'z'; c++ {
		classes[c] |= unreserved
		classes[c-'a'+'A'] |= unreserved
	}
	for c := '0'; c <= '9'; c++ {
		classes[c] |= unreserved
	}
	for _, c := range "-._~" {
		classes[c] |= unreserved
	}
	for _, c := range "!$&'()*+,;=" {
		classes[c] |= subDelim
	}
	for _, c := range "&=+;" {
		classes[c] |= formSpecial
	}
	classes[':'] |= colonAt | ipv6Literal
	classes['@'] |= colonAt
	classes['/'] |= slashQ
	classes['?'] |= slashQ
}

const upperHex = "0123456789ABCDEF"

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// appendEscaped appends s with its percent-encoding normalised: escapes of
// characters in the decode set are decoded, other escapes get upper-case
// hex, a stray '%' becomes "%25", and characters outside the literal set
// are encoded. In a query (decode set with queryNoForm) a space, "%20" and
// "+" are all written "+", and escapes of form-special characters stay
// escapes.
func appendEscaped(b []byte, s string, literal, decode uint8) []byte {
	inQuery := decode&queryNoForm != 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				d := unhex(s[i+1])<<4 | unhex(s[i+2])
				i += 2
				switch {
				case inQuery && d == ' ':
					b = append(b, '+')
				case inQuery && classes[d]&formSpecial != 0:
					b = append(b, '%', upperHex[d>>4], upperHex[d&15])
				case classes[d]&(decode&^queryNoForm) != 0:
					b = append(b, d)
				default:
					b = append(b, '%', upperHex[d>>4], upperHex[d&15])
				}
				continue
			}
			b = append(b, '%', '2', '5')
			continue
		}
		if inQuery && c == ' ' {
			b = append(b, '+')
			continue
		}
		if classes[c]&literal != 0 {
			b = append(b, c)
			continue
		}
		b = append(b, '%', upperHex[c>>4], upperHex[c&15])
	}
	return b
}
