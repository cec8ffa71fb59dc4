package crawlkeeper_test

import (
	"strings"
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
)

func TestDurabilitySettings(t *testing.T) {
	for _, d := range []crawlkeeper.Durability{"", crawlkeeper.DurabilityFull, crawlkeeper.DurabilityNormal} {
		if err := d.Validate(); err != nil {
			t.Errorf("%q: %v", d, err)
		}
	}
	if got := crawlkeeper.Durability("").OrDefault(); got != crawlkeeper.DurabilityFull {
		t.Errorf("default durability = %q, want full", got)
	}
	err := crawlkeeper.Durability("fast").Validate()
	if err == nil || !strings.Contains(err.Error(), "full") || !strings.Contains(err.Error(), "normal") {
		t.Errorf("unknown durability: %v, want an error naming the settings", err)
	}
	cfg := &crawlkeeper.Config{Store: crawlkeeper.StoreConfig{Durability: "fsync"}}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "store.durability") {
		t.Errorf("config with an unknown durability: %v", err)
	}
}
