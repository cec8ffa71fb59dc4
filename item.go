package crawlkeeper

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// Metadata keys. Keys that start with "_" are metadata and are not stored
// as item fields.
const (
	MetaSource    = "_source"
	MetaTarget    = "_target"
	MetaRound     = "_round"
	MetaCrawledAt = "_crawled_at"
	// MetaError reports that fetching the item's target failed: the
	// item's (round, target) is marked failed with this reason instead of
	// done. An item with _error and no other fields is a failure report
	// only, and is not stored.
	MetaError = "_error"
)

// Meta is the metadata of one item or of a whole request. An item's own
// metadata keys win over the request's.
type Meta struct {
	Source    string
	Target    string
	Round     string
	CrawledAt any // a string or json.Number as the crawler sent it; nil if absent
	// Error is the failure reason of _error; empty when the fetch worked.
	Error string
}

// RawItem is one item as read from input, before validation.
type RawItem struct {
	// Line is the 1-based line of NDJSON input, or the 1-based position of
	// the element in a JSON array.
	Line int
	Data []byte
	// Err is set when the item could not even be read (too large, broken
	// JSON in an array); Data is then nil.
	Err error
}

// ItemError is a rejected item: its position and the reason.
type ItemError struct {
	Line  int    `json:"line"`
	Error string `json:"error"`
}

// ReadItems reads JSON lines, or one JSON array, from r and calls fn for
// each item in order. Items over maxBytes are reported with Err set and
// skipped without buffering them whole. It returns the first error from r
// or from fn.
func ReadItems(r io.Reader, maxBytes int, fn func(RawItem) error) error {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxItemBytes
	}
	br := bufio.NewReaderSize(r, 64<<10)
	// Peek past leading white space to tell a JSON array from JSON lines,
	// counting the newlines consumed so line numbers stay right.
	skipped := 0
	for {
		b, err := br.Peek(1)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n' {
			if b[0] == '\n' {
				skipped++
			}
			br.ReadByte()
			continue
		}
		if b[0] == '[' {
			return readArray(br, maxBytes, fn)
		}
		break
	}
	return readLines(br, skipped, maxBytes, fn)
}

func readLines(br *bufio.Reader, line, maxBytes int, fn func(RawItem) error) error {
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer: collect up to the limit and
			// discard the rest.
			line++
			long = append(long[:0], chunk...)
			size := len(chunk)
			for err == bufio.ErrBufferFull {
				chunk, err = br.ReadSlice('\n')
				size += len(chunk)
				if len(long) <= maxBytes {
					long = append(long, chunk...)
				}
			}
			if err != nil && err != io.EOF {
				return err
			}
			data := bytes.TrimSpace(long)
			if len(data) > maxBytes {
				if ferr := fn(RawItem{Line: line, Err: tooLarge(size, maxBytes)}); ferr != nil {
					return ferr
				}
			} else if len(data) > 0 {
				if ferr := fn(RawItem{Line: line, Data: append([]byte(nil), data...)}); ferr != nil {
					return ferr
				}
			}
			if err == io.EOF {
				return nil
			}
			continue
		}
		if len(chunk) > 0 {
			line++
			data := bytes.TrimSpace(chunk)
			if len(data) > maxBytes {
				if ferr := fn(RawItem{Line: line, Err: tooLarge(len(data), maxBytes)}); ferr != nil {
					return ferr
				}
			} else if len(data) > 0 {
				// ReadSlice's buffer is reused: copy.
				if ferr := fn(RawItem{Line: line, Data: append([]byte(nil), data...)}); ferr != nil {
					return ferr
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func tooLarge(size, max int) error {
	return Errorf(ETOOLARGE, "item is %d bytes, over the limit of %d bytes: split it or raise limits.max_item_bytes", size, max)
}

func readArray(br *bufio.Reader, maxBytes int, fn func(RawItem) error) error {
	dec := json.NewDecoder(br)
	if _, err := dec.Token(); err != nil { // the opening '['
		return fn(RawItem{Line: 1, Err: Errorf(EINVALID, "invalid JSON array: %v", err)})
	}
	for pos := 1; dec.More(); pos++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			var se *json.SyntaxError
			if !errors.As(err, &se) && err != io.ErrUnexpectedEOF {
				return err // the reader failed, not the JSON
			}
			// The decoder cannot resynchronise inside a broken array; the
			// items before this one are kept.
			return fn(RawItem{Line: pos, Err: Errorf(EINVALID, "invalid JSON at array element %d, the rest of the array was not read: %v", pos, err)})
		}
		if len(raw) > maxBytes {
			if err := fn(RawItem{Line: pos, Err: tooLarge(len(raw), maxBytes)}); err != nil {
				return err
			}
			continue
		}
		if err := fn(RawItem{Line: pos, Data: raw}); err != nil {
			return err
		}
	}
	return nil
}

// DecodeItem parses and validates one item: valid UTF-8, a JSON object,
// metadata keys of the right types. Metadata found in the item is merged
// over base. The returned map holds the item's fields without metadata,
// with numbers as json.Number.
func DecodeItem(data []byte, base Meta) (map[string]any, Meta, error) {
	meta := base
	if !utf8.Valid(data) {
		return nil, meta, Errorf(EINVALID, "item is not valid UTF-8: re-encode the input as UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, meta, Errorf(EINVALID, "invalid JSON: %s", jsonErrText(err))
	}
	if dec.More() {
		return nil, meta, Errorf(EINVALID, "invalid JSON: more than one value on the line; put one item per line")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, meta, Errorf(EINVALID, "invalid JSON: unexpected data after the item")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, meta, Errorf(EINVALID, "item is %s, not an object: each item must be a JSON object", aKind(v))
	}
	for k, val := range m {
		if len(k) == 0 || k[0] != '_' {
			continue
		}
		delete(m, k)
		if val == nil {
			continue
		}
		switch k {
		case MetaSource, MetaTarget:
			s, ok := val.(string)
			if !ok {
				return nil, meta, Errorf(EINVALID, "metadata %s must be a string, got %s", k, aKind(val))
			}
			if err := ValidateName("metadata "+k, s); err != nil {
				return nil, meta, err
			}
			if k == MetaSource {
				meta.Source = s
			} else {
				meta.Target = s
			}
		case MetaRound:
			r, err := roundText(val)
			if err != nil {
				return nil, meta, err
			}
			meta.Round = r
		case MetaError:
			s, ok := val.(string)
			if !ok {
				return nil, meta, Errorf(EINVALID, "metadata %s must be a string (the reason the target failed), got %s", k, aKind(val))
			}
			if s = CleanReason(s); s == "" {
				s = "error"
			}
			meta.Error = s
		case MetaCrawledAt:
			switch val.(type) {
			case string, json.Number:
				meta.CrawledAt = val
			default:
				return nil, meta, Errorf(EINVALID, "metadata %s must be a date string or a Unix time number, got %s", k, aKind(val))
			}
		}
		// Other "_" keys are crawler-private metadata and are dropped.
	}
	return m, meta, nil
}

// MaxNameBytes is the longest source or target name, given per item
// (_source, _target) or per request (--source, ?target=, a client's
// options): what every store's source and target columns hold.
const MaxNameBytes = 1024

// ValidateName checks a source or target name against the limits every
// store holds: at most MaxNameBytes bytes of UTF-8. what names the value in
// the message ("metadata _target", "--source").
func ValidateName(what, s string) error {
	if len(s) > MaxNameBytes {
		return Errorf(EINVALID, "%s is %d bytes; the limit is %d", what, len(s), MaxNameBytes)
	}
	if !utf8.ValidString(s) {
		return Errorf(EINVALID, "%s is not valid UTF-8: send the name encoded as UTF-8", what)
	}
	return nil
}

// Validate checks request-level metadata (flags, query parameters, a
// client's options) against the limits the same metadata has in an item,
// so that a request whose own metadata no store can hold is refused whole
// before anything of it is stored. flags names each value as the caller
// spells it: flags[0] the source, flags[1] the target, flags[2] the round
// ("--source", "?source=").
func (m Meta) Validate(flags [3]string) error {
	if err := ValidateName(flags[0], m.Source); err != nil {
		return err
	}
	if err := ValidateName(flags[1], m.Target); err != nil {
		return err
	}
	if m.Round != "" {
		if err := ValidateRound(m.Round); err != nil {
			return Errorf(EINVALID, "%s: %s", flags[2], ErrorMessage(err))
		}
	}
	return nil
}

// roundText accepts a round as a non-negative integer or a non-empty
// string of up to 128 bytes.
func roundText(v any) (string, error) {
	switch x := v.(type) {
	case json.Number:
		n, err := strconv.ParseInt(x.String(), 10, 64)
		if err != nil || n < 0 {
			return "", Errorf(EINVALID, "metadata _round must be a non-negative integer or a string, got %s", x)
		}
		return strconv.FormatInt(n, 10), nil
	case string:
		if err := ValidateRound(x); err != nil {
			return "", err
		}
		return x, nil
	default:
		return "", Errorf(EINVALID, "metadata _round must be an integer or a string, got %s", aKind(v))
	}
}

// ValidateRound checks a round name: 1 to 128 bytes of printable text.
func ValidateRound(s string) error {
	if s == "" || len(s) > 128 {
		return Errorf(EINVALID, "round %q: a round is 1 to 128 characters", s)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return Errorf(EINVALID, "round %q: control characters are not allowed", s)
		}
	}
	return nil
}

// jsonKind names the JSON type of v with its article ("an object").
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func aKind(v any) string {
	k := jsonKind(v)
	if k == "null" {
		return k
	}
	if k == "array" || k == "object" {
		return "an " + k
	}
	return "a " + k
}

func jsonErrText(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v (at byte %d)", se, se.Offset)
	}
	if err == io.ErrUnexpectedEOF {
		return "unexpected end of input"
	}
	return err.Error()
}
