package dates

import (
	"slices"
	"sync"
)

// Nothing in this package does work in package init: Go runs the init of
// every package a binary links, and every crawlkeeper command links this
// one, while most never read a date. Each table is built once, on first
// use (sync.OnceValue), and records its name here.
var loaded struct {
	sync.Mutex
	names []string
}

func markLoaded(name string) {
	loaded.Lock()
	defer loaded.Unlock()
	loaded.names = append(loaded.names, name)
}

// Loaded returns the names of the tables this process has built so far,
// in the order they were built: "words", "latin fold", "zones", and
// "go-dateparser" once the fallback library has been asked (it builds
// its own tables then). A process that has read no date has built none;
// start-up tests check it.
func Loaded() []string {
	loaded.Lock()
	defer loaded.Unlock()
	return slices.Clone(loaded.names)
}

// libraryUsed records the first call into go-dateparser.
var libraryUsed = sync.OnceFunc(func() { markLoaded("go-dateparser") })
