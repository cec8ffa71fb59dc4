package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
)

// ChangeKind says how a field differs between two versions.
type ChangeKind string

// Change kinds.
const (
	Added   ChangeKind = "added"
	Removed ChangeKind = "removed"
	Changed ChangeKind = "changed"
)

// Change is one field-level difference between two JSON items.
type Change struct {
	// Path locates the field: "salary", "location.city", "tags[2]",
	// `["odd key"]`. The whole item is "$".
	Path string
	// Field is the top-level field the change is under, for highlighting
	// the item's fields; empty for the whole item.
	Field string
	Kind  ChangeKind
	// Old and New are the values as compact JSON; Old is empty for an
	// added field and New for a removed one.
	Old, New string
}

// DiffItems compares two JSON documents (record items) field by field:
// objects by key, arrays by position, everything else by value. Changes
// are in path order. Numbers compare by their text, which is exact for
// items that crawlkeeper stores (compact JSON with sorted keys).
func DiffItems(old, new []byte) ([]Change, error) {
	a, err := decodeJSON(old)
	if err != nil {
		return nil, fmt.Errorf("diff: old version: %w", err)
	}
	b, err := decodeJSON(new)
	if err != nil {
		return nil, fmt.Errorf("diff: new version: %w", err)
	}
	var out []Change
	diffValue(&out, "", "", a, b)
	return out, nil
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

func joinKey(path, key string) string {
	if !plainKey.MatchString(key) {
		q, _ := json.Marshal(key)
		return path + "[" + string(q) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func diffValue(out *[]Change, path, field string, a, b any) {
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			keys := make([]string, 0, len(av)+len(bv))
			for k := range av {
				keys = append(keys, k)
			}
			for k := range bv {
				if _, ok := av[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				f := field
				if path == "" {
					f = k
				}
				x, inA := av[k]
				y, inB := bv[k]
				p := joinKey(path, k)
				switch {
				case !inA:
					*out = append(*out, Change{Path: p, Field: f, Kind: Added, New: compact(y)})
				case !inB:
					*out = append(*out, Change{Path: p, Field: f, Kind: Removed, Old: compact(x)})
				default:
					diffValue(out, p, f, x, y)
				}
			}
			return
		}
	case []any:
		if bv, ok := b.([]any); ok {
			for i := 0; i < max(len(av), len(bv)); i++ {
				p := path + "[" + strconv.Itoa(i) + "]"
				switch {
				case i >= len(av):
					*out = append(*out, Change{Path: p, Field: field, Kind: Added, New: compact(bv[i])})
				case i >= len(bv):
					*out = append(*out, Change{Path: p, Field: field, Kind: Removed, Old: compact(av[i])})
				default:
					diffValue(out, p, field, av[i], bv[i])
				}
			}
			return
		}
	default:
		if compact(a) == compact(b) {
			return
		}
	}
	// Different types, or different scalar values.
	if path == "" {
		path = "$"
	}
	*out = append(*out, Change{Path: path, Field: field, Kind: Changed, Old: compact(a), New: compact(b)})
}

// compact renders a decoded value as compact JSON; maps come out with
// sorted keys, so equal values render equally.
func compact(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return string(bytes.TrimRight(buf.Bytes(), "\n"))
}

// ChangedFields maps each top-level field touched by changes to how it
// changed; a field with changes of several kinds inside counts as changed.
func ChangedFields(changes []Change) map[string]ChangeKind {
	out := map[string]ChangeKind{}
	for _, c := range changes {
		if c.Field == "" {
			continue
		}
		if k, ok := out[c.Field]; ok && k != c.Kind {
			out[c.Field] = Changed
			continue
		}
		// A nested addition or removal changes the top-level field.
		if c.Path != c.Field {
			out[c.Field] = Changed
			continue
		}
		out[c.Field] = c.Kind
	}
	return out
}
