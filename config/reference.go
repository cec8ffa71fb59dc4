package config

//go:generate go run gen_reference.go

// Key is one configuration key of the reference that `crawlkeeper help
// config` prints and docs/CONFIG.md shows. The rows are generated from
// the doc comments and yaml tags of crawlkeeper.Config and the types it
// holds (go generate ./config), so they say what the code says.
type Key struct {
	// Path is the key's place in the YAML file: "defaults.max_age",
	// "alerts.rules[].kind" (a key of each list element), "sources.NAME"
	// (a map keyed by name).
	Path string
	// Type is what the key takes: string, boolean, integer, number,
	// duration (90m, 36h, 30d, 2w; off), "list of strings", or "section",
	// "list" and "map" for keys that hold other keys.
	Type string
	// Default is the value used when the key is not set, as the doc
	// comment states it; empty when the key has none.
	Default string
	// Doc says what the key does.
	Doc string
}

// Reference returns every configuration key, in the order of the file's
// sections.
func Reference() []Key {
	return append([]Key(nil), reference...)
}
