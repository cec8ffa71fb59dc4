package chain_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/chain"
)

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{" , ", nil},
		{"dates", []string{"dates"}},
		{" dates, fingerprint ,stats,", []string{"dates", "fingerprint", "stats"}},
	} {
		if got := chain.Names(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Names(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestBuild(t *testing.T) {
	t.Run("default chain", func(t *testing.T) {
		ps, release, err := chain.Build(crawlkeeper.DefaultProcessors, chain.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		if got := crawlkeeper.ChainSignature(ps); got != "dates@1+fingerprint@2+stats@1" {
			t.Fatalf("signature %q", got)
		}
	})
	t.Run("unknown name", func(t *testing.T) {
		_, _, err := chain.Build([]string{"dates", "nope"}, chain.Options{})
		if crawlkeeper.ErrorCode(err) != crawlkeeper.EINVALID || !strings.Contains(err.Error(), `"nope"`) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("twice", func(t *testing.T) {
		if _, _, err := chain.Build([]string{"noop", "noop"}, chain.Options{}); err == nil {
			t.Fatal("a chain naming noop twice was built")
		}
	})
	t.Run("exec without a command", func(t *testing.T) {
		if _, _, err := chain.Build([]string{"exec"}, chain.Options{}); err == nil {
			t.Fatal("exec without a command was built")
		}
	})
}
