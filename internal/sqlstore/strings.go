package sqlstore

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// DecodeStrings decodes a JSON array of strings (key_parts, date_errors)
// as json.Unmarshal would. Every record read decodes key_parts, and a
// rescan reads every record: arrays as json.Marshal writes them without
// escapes (the usual case) are split by hand, a few times faster
// (BenchmarkDecodeStrings);
// anything else goes to encoding/json.
func DecodeStrings(text string, dst *[]string) error {
	if out, ok := splitStrings(text); ok {
		*dst = out
		return nil
	}
	return json.Unmarshal([]byte(text), dst)
}

// splitStrings parses `["a","b"]` with no backslash, no whitespace and
// valid UTF-8, and reports false for anything else.
func splitStrings(s string) ([]string, bool) {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' || strings.IndexByte(s, '\\') >= 0 || !utf8.ValidString(s) {
		return nil, false
	}
	body := s[1 : len(s)-1]
	out := make([]string, 0, strings.Count(body, `","`)+1)
	if body == "" {
		return out, true
	}
	for {
		if len(body) < 2 || body[0] != '"' {
			return nil, false
		}
		end := strings.IndexByte(body[1:], '"')
		if end < 0 {
			return nil, false
		}
		v := body[1 : 1+end]
		for i := 0; i < len(v); i++ {
			if v[i] < 0x20 { // control characters are escaped in valid JSON
				return nil, false
			}
		}
		out = append(out, v)
		body = body[2+end:]
		if body == "" {
			return out, true
		}
		if body[0] != ',' {
			return nil, false
		}
		body = body[1:]
	}
}
