package config_test

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/config"
	"github.com/crawlkeeper/crawlkeeper/config/internal/refgen"
)

// TestReferenceUpToDate fails when a configuration type changed and
// reference_gen.go was not generated again.
func TestReferenceUpToDate(t *testing.T) {
	want, err := refgen.Generate("..")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("reference_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("config/reference_gen.go is stale: run `go generate ./config`, then `go run ./cmd/crawlkeeper help config --markdown > docs/CONFIG.md`")
	}
}

// TestReferenceCoversConfig walks crawlkeeper.Config by reflection, as the
// YAML decoder sees it, and checks that the reference lists exactly its
// keys: the generator reads the source, this reads the compiled type.
func TestReferenceCoversConfig(t *testing.T) {
	var want []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, prefix string)
	walk = func(typ reflect.Type, prefix string) {
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if key == "" || key == "-" || !f.IsExported() {
				continue
			}
			path := prefix + key
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
				want = append(want, path+".NAME")
				if !seen[ft.Elem()] {
					walk(ft.Elem(), path+".NAME.")
				}
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				want = append(want, path)
				walk(ft.Elem(), path+"[].")
			case ft.Kind() == reflect.Struct:
				want = append(want, path)
				if !seen[ft] {
					walk(ft, path+".")
				}
			default:
				want = append(want, path)
			}
		}
	}
	walk(reflect.TypeFor[crawlkeeper.Config](), "")
	var got []string
	for _, k := range config.Reference() {
		got = append(got, k.Path)
		if k.Doc == "" {
			t.Errorf("%s has no doc comment: write one on its field", k.Path)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the reference lists\n%v\nthe Config type has\n%v", got, want)
	}
}
