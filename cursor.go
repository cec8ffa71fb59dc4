package crawlkeeper

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// Cursor is the position of a keyset-paginated listing: the sort key of
// the last record of the previous page.
type Cursor struct {
	// UpdatedMicros is last_updated_at in Unix microseconds (OrderNewest).
	UpdatedMicros int64
	ID            int64
}

// EncodeCursor returns the opaque cursor that continues a listing after r.
func EncodeCursor(r *Record, o Order) string {
	s := strconv.FormatInt(r.ID, 10)
	if o == OrderNewest {
		s = strconv.FormatInt(TimeMicros(r.LastUpdatedAt), 10) + "." + s
	}
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

// DecodeCursor reads a cursor made by EncodeCursor for the same order. It
// returns nil for an empty cursor and an EINVALID error for a bad one.
func DecodeCursor(c string, o Order) (*Cursor, error) {
	if c == "" {
		return nil, nil
	}
	bad := Errorf(EINVALID, "invalid cursor %q: pass a previous page's next cursor unchanged", c)
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return nil, bad
	}
	parts := strings.Split(string(b), ".")
	want := 1
	if o == OrderNewest {
		want = 2
	}
	if len(parts) != want {
		return nil, bad
	}
	var n [2]int64
	for i, p := range parts {
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, bad
		}
		n[i] = v
	}
	if want == 1 {
		return &Cursor{ID: n[0]}, nil
	}
	return &Cursor{UpdatedMicros: n[0], ID: n[1]}, nil
}
