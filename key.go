package crawlkeeper

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/crawlkeeper/crawlkeeper/canon"
)

// NormalizeText trims s and collapses every run of Unicode white space to
// one ASCII space. Stored titles are written this way.
func NormalizeText(s string) string { return canon.Space(s) }

// NormalizeURL returns the form of raw that records show in their url
// column: scheme and host lower-cased, the default port dropped, the
// fragment removed and an empty path written as "/". A string that is not
// an absolute URL is only trimmed. Keys use the source's canonical form
// instead (SourcePolicy.URLRules, package canon), which also removes
// tracking parameters, sorts the query and folds the trailing slash.
func NormalizeURL(raw string) string {
	s := strings.TrimSpace(raw)
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "" {
		return s
	}
	u.Scheme = strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") { // IPv6 literal
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	u.Host = host
	u.Fragment = ""
	u.RawFragment = ""
	if u.Path == "" && u.RawPath == "" {
		u.Path = "/"
	}
	return u.String()
}

// fieldText renders a key field's value as text: strings as-is, numbers by
// their literal, anything else as canonical JSON.
func fieldText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case nil:
		return ""
	default:
		var buf bytes.Buffer
		_ = writeCanonical(&buf, x)
		return buf.String()
	}
}

// keyField applies the source's comparison rules to one key field: the
// canonical URL for fields that hold an absolute URL or are named like one,
// title folding for the title, white-space normalisation for everything
// else (ids and codes keep their letter case).
func (p *SourcePolicy) keyField(name string, v any) string {
	s := fieldText(v)
	if isURLField(name, s) {
		return p.urlRules().Canonical(s)
	}
	if name == "title" {
		return canon.TitleOptions{Fold: p.FoldTitle, KeepEntities: p.KeepTitleEntities}.Title(s)
	}
	return NormalizeText(s)
}

// isURLField reports whether a key field is compared as a URL.
func isURLField(name, value string) bool {
	lname := strings.ToLower(name)
	return lname == "url" || lname == "link" || strings.HasSuffix(lname, "_url") ||
		strings.HasPrefix(value, "http://") || strings.HasPrefix(value, "https://")
}

// urlRules returns the policy's URL rules; a policy built by hand rather
// than by Config.Policy gets the defaults.
func (p *SourcePolicy) urlRules() *canon.URLRules {
	if p.URLRules != nil {
		return p.URLRules
	}
	return defaultURLRules
}

var defaultURLRules, _ = canon.NewURLRules(canon.URLOptions{})

// BuildKey computes the dedup key of item for a source. When every key
// field is present and non-empty, the key comes from their normalised
// values; otherwise it is a hash of every non-volatile field. The key is
// scoped by source: the same page delivered by two sources is two records,
// because sources may define identity differently.
func BuildKey(p *SourcePolicy, item map[string]any) (key string, parts []string) {
	key, parts, _ = buildKey(p, item)
	return key, parts
}

// buildKey is BuildKey that also reports whether the key came from the key
// fields (true) or from the fallback hash (false).
func buildKey(p *SourcePolicy, item map[string]any) (key string, parts []string, fromFields bool) {
	parts = make([]string, 0, len(p.Key))
	for _, f := range p.Key {
		v, ok := item[f]
		if !ok {
			parts = nil
			break
		}
		s := p.keyField(f, v)
		if s == "" {
			parts = nil
			break
		}
		parts = append(parts, f+"="+s)
	}
	if parts == nil {
		names := make([]string, 0, len(item))
		for k := range item {
			if !p.IsVolatile(k) {
				names = append(names, k)
			}
		}
		sort.Strings(names)
		h := sha256.New()
		writeCanonicalFields(h, item, names)
		sum := h.Sum(nil)
		parts = []string{"hash(" + strings.Join(names, ",") + ")=" + hex.EncodeToString(sum[:16])}
		return keyOf(p.Source, parts), parts, false
	}
	return keyOf(p.Source, parts), parts, true
}

func keyOf(source string, parts []string) string {
	h := sha256.New()
	h.Write([]byte(source))
	for _, s := range parts {
		h.Write([]byte{0})
		h.Write([]byte(s))
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:16])
}

type byteWriter interface {
	Write([]byte) (int, error)
}

// writeCanonicalFields writes the named fields of m as a canonical JSON
// object (names must be sorted).
func writeCanonicalFields(w byteWriter, m map[string]any, names []string) {
	w.Write([]byte{'{'})
	for i, k := range names {
		if i > 0 {
			w.Write([]byte{','})
		}
		writeString(w, k)
		w.Write([]byte{':'})
		_ = writeCanonical(w, m[k])
	}
	w.Write([]byte{'}'})
}

// writeCanonical writes v as compact JSON with object keys sorted and
// without HTML escaping. Values come from a decoder using UseNumber, so
// numbers keep the literal the crawler sent.
func writeCanonical(w byteWriter, v any) error {
	switch x := v.(type) {
	case nil:
		w.Write([]byte("null"))
	case bool:
		if x {
			w.Write([]byte("true"))
		} else {
			w.Write([]byte("false"))
		}
	case string:
		writeString(w, x)
	case json.Number:
		w.Write([]byte(x))
	case float64:
		b, err := json.Marshal(x)
		if err != nil {
			return err
		}
		w.Write(b)
	case map[string]any:
		names := make([]string, 0, len(x))
		for k := range x {
			names = append(names, k)
		}
		sort.Strings(names)
		writeCanonicalFields(w, x, names)
	case []any:
		w.Write([]byte{'['})
		for i, e := range x {
			if i > 0 {
				w.Write([]byte{','})
			}
			if err := writeCanonical(w, e); err != nil {
				return err
			}
		}
		w.Write([]byte{']'})
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return err
		}
		w.Write(b)
	}
	return nil
}

const hexDigits = "0123456789abcdef"

// writeString writes s as a JSON string. It escapes only what JSON requires
// (quote, backslash, control characters) plus U+2028 and U+2029, and
// replaces invalid UTF-8, which items have already been checked against.
func writeString(w byteWriter, s string) {
	var buf [64]byte
	b := buf[:0]
	b = append(b, '"')
	start := 0
	flush := func(i int) {
		if len(b) > 0 {
			w.Write(b)
			b = b[:0]
		}
		if start < i {
			w.Write([]byte(s[start:i]))
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			flush(i)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			flush(i)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			flush(i)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	flush(len(s))
	w.Write([]byte{'"'})
}
