package crawlkeeper

import "context"

// Durability is what a write a store acknowledged survives. It is set once
// for a store (configuration key store.durability) and says what "Ingest
// returned nil" promises a crawler that discards its items on success.
type Durability string

// Durability settings.
const (
	// DurabilityFull: an acknowledged write is on disk and survives a
	// killed process, an operating-system crash and a power loss (SQLite
	// synchronous=FULL; PostgreSQL synchronous_commit=on; MongoDB journaled
	// writes). The default.
	DurabilityFull Durability = "full"
	// DurabilityNormal: an acknowledged write survives a killed process;
	// an operating-system crash or a power loss can lose the last
	// acknowledged writes (never corrupt older ones). The operator's
	// explicit choice, for throughput.
	DurabilityNormal Durability = "normal"
)

// OrDefault returns d, or DurabilityFull when unset.
func (d Durability) OrDefault() Durability {
	if d == "" {
		return DurabilityFull
	}
	return d
}

// Validate checks that d is a known setting.
func (d Durability) Validate() error {
	switch d {
	case "", DurabilityFull, DurabilityNormal:
		return nil
	}
	return Errorf(EINVALID, "config: store.durability %q is not a setting: use full (the default: acknowledged writes survive a power loss) or normal (they survive a killed process only)", string(d))
}

// StoreConfig configures the record store.
type StoreConfig struct {
	// Durability is what an acknowledged write survives. Defaults to full.
	Durability Durability `yaml:"durability" json:"durability,omitempty"`
}

// StoreOptions are the settings a store is opened with.
type StoreOptions struct {
	// Durability defaults to DurabilityFull.
	Durability Durability
	// MustExist makes opening fail with an ENOTFOUND error (NoStoreError)
	// when the location holds no crawlkeeper store, instead of creating
	// one: a command that only reads must not leave an empty store behind
	// a mistyped folder or URL. Defaults to false (create).
	MustExist bool
}

// NoStoreError is the error a store opened with MustExist returns when
// where (a folder, a file or a redacted server URL) holds no crawlkeeper
// store.
func NoStoreError(where string) *Error {
	return Errorf(ENOTFOUND, "no crawlkeeper store in %s (ingest, serve or demo creates one)", where)
}

// DurabilityStatus says what the store's acknowledged writes survive, as
// configured and as the engine underneath is set up.
type DurabilityStatus struct {
	// Setting is the store's durability setting.
	Setting Durability `json:"setting"`
	// PowerLossSafe is true when an acknowledged write survives a power
	// loss with the engine's settings as they are.
	PowerLossSafe bool `json:"power_loss_safe"`
	// Detail names the engine settings that decide it, and what to change
	// when they do not keep the promise.
	Detail string `json:"detail"`
}

// DurabilityReporter is a store that can report its DurabilityStatus.
// Every store implements it; the engine settings it reads are the server
// administrator's (crawlkeeper sets what a session may set and reports the
// rest).
type DurabilityReporter interface {
	DurabilityStatus(ctx context.Context) (*DurabilityStatus, error)
}
