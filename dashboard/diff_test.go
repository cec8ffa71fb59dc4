package dashboard

import (
	"reflect"
	"testing"
)

func TestDiffItems(t *testing.T) {
	for _, c := range []struct {
		name     string
		old, new string
		want     []Change
	}{
		{"equal", `{"a":1,"b":"x"}`, `{"b":"x","a":1}`, nil},
		{"changed scalar", `{"salary":"50k","title":"SRE"}`, `{"salary":"60k","title":"SRE"}`,
			[]Change{{Path: "salary", Field: "salary", Kind: Changed, Old: `"50k"`, New: `"60k"`}}},
		{"added and removed", `{"a":1,"gone":true}`, `{"a":1,"new":null}`,
			[]Change{{Path: "gone", Field: "gone", Kind: Removed, Old: "true"}, {Path: "new", Field: "new", Kind: Added, New: "null"}}},
		{"nested object", `{"loc":{"city":"Paris","zip":"75001"}}`, `{"loc":{"city":"Lyon","zip":"75001"}}`,
			[]Change{{Path: "loc.city", Field: "loc", Kind: Changed, Old: `"Paris"`, New: `"Lyon"`}}},
		{"array grows and changes", `{"tags":["a","b"]}`, `{"tags":["a","c","d"]}`,
			[]Change{{Path: "tags[1]", Field: "tags", Kind: Changed, Old: `"b"`, New: `"c"`}, {Path: "tags[2]", Field: "tags", Kind: Added, New: `"d"`}}},
		{"array shrinks", `{"t":[1,2]}`, `{"t":[1]}`, []Change{{Path: "t[1]", Field: "t", Kind: Removed, Old: "2"}}},
		{"type change", `{"n":"1"}`, `{"n":1}`, []Change{{Path: "n", Field: "n", Kind: Changed, Old: `"1"`, New: "1"}}},
		{"object to scalar", `{"o":{"x":1}}`, `{"o":"x"}`, []Change{{Path: "o", Field: "o", Kind: Changed, Old: `{"x":1}`, New: `"x"`}}},
		{"big numbers stay exact", `{"id":12345678901234567890}`, `{"id":12345678901234567891}`,
			[]Change{{Path: "id", Field: "id", Kind: Changed, Old: "12345678901234567890", New: "12345678901234567891"}}},
		{"odd keys are quoted", `{"a b":1,"x.y":1}`, `{"a b":2,"x.y":1}`,
			[]Change{{Path: `["a b"]`, Field: "a b", Kind: Changed, Old: "1", New: "2"}}},
		{"html is not escaped", `{"h":"<b>"}`, `{"h":"<i>"}`, []Change{{Path: "h", Field: "h", Kind: Changed, Old: `"<b>"`, New: `"<i>"`}}},
		{"whole item", `1`, `2`, []Change{{Path: "$", Kind: Changed, Old: "1", New: "2"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := DiffItems([]byte(c.old), []byte(c.new))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("DiffItems(%s, %s)\n got %+v\nwant %+v", c.old, c.new, got, c.want)
			}
		})
	}
	if _, err := DiffItems([]byte(`{`), []byte(`{}`)); err == nil {
		t.Fatal("bad JSON: no error")
	}
}

func TestChangedFields(t *testing.T) {
	got := ChangedFields([]Change{
		{Path: "salary", Field: "salary", Kind: Changed},
		{Path: "new", Field: "new", Kind: Added},
		{Path: "gone", Field: "gone", Kind: Removed},
		{Path: "tags[2]", Field: "tags", Kind: Added},
		{Path: "$", Kind: Changed},
	})
	want := map[string]ChangeKind{"salary": Changed, "new": Added, "gone": Removed, "tags": Changed}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ChangedFields = %v, want %v", got, want)
	}
}
