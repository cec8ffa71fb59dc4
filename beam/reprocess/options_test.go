package reprocess

import (
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

func TestOptions(t *testing.T) {
	t.Run("no store", func(t *testing.T) {
		if err := (Options{}).Validate(); crawlkeeper.ErrorCode(err) != crawlkeeper.EINVALID {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("unknown processor", func(t *testing.T) {
		err := Options{Store: "postgres://h/db", Processors: []string{"dates", "nope"}}.Validate()
		if err == nil || !strings.Contains(err.Error(), `"nope"`) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("registered processor keeps its place", func(t *testing.T) {
		ps, release, err := chainFor([]string{"dates", "mutate", "noop"}, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		if got := crawlkeeper.ChainSignature(ps); got != "dates@1+mutate@1+noop@1" {
			t.Fatalf("chain %q", got)
		}
	})
	t.Run("configuration", func(t *testing.T) {
		o := Options{Store: "postgres://h/db", Batch: 50, ConfigYAML: "pipeline:\n  processors: [noop]\n  period: 2h\n  batch: 100\n"}
		if err := o.ApplyConfig(); err != nil {
			t.Fatal(err)
		}
		if len(o.Processors) != 1 || o.Processors[0] != "noop" || o.Period != 2*time.Hour || o.Batch != 50 {
			t.Fatalf("options %+v", o)
		}
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("defaults", func(t *testing.T) {
		o := Options{Store: "postgres://h/db"}.withDefaults()
		if o.ReadStream != "CRAWLKEEPER_BEAM" || o.Block != 8*500 || o.Shards != DefaultShards || o.Period != 24*time.Hour {
			t.Fatalf("defaults %+v", o)
		}
	})
}
