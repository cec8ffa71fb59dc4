package crawlkeeper

import "context"

// MonitorPersister is where an embedded monitor keeps its data, in the same
// database as the records: the target dictionary, an append-only log of
// encoded changes numbered by increasing sequence numbers, and named parts
// that hold a snapshot of the state folded from the log up to a sequence
// number. The log bodies and parts are opaque to the persister; the
// monitor encodes them. Every store implements it (sqlite, postgres,
// mysql, mongodb); monitortest.RunPersister is its conformance suite.
//
// Several processes may share one persister: a monitor that finds log
// entries it has not applied (written by another process) applies them
// before it answers, so every process converges on the same state. That
// needs the log to be dense and its entries to become visible in sequence
// order: a reader that has applied entries up to n and reads n+1 next must
// be able to rely on nothing numbered n or less appearing later.
type MonitorPersister interface {
	// UpdateMonitor runs fn in one write transaction that excludes every
	// other writer of the database. Nothing fn wrote is kept unless fn
	// returns nil and the commit succeeds; when UpdateMonitor returns nil
	// the writes survive a killed process. A store without multi-document
	// transactions (mongodb) runs fn again when a concurrent writer took
	// the dictionary ids or log number it wanted, and may keep harmless
	// remains of a failed fn: dictionary names no entry uses yet, snapshot
	// parts no snapshot names.
	UpdateMonitor(ctx context.Context, fn func(tx MonitorTx) error) error
	// ViewMonitor runs fn in one read transaction: a consistent snapshot
	// that never blocks writers.
	ViewMonitor(ctx context.Context, fn func(v MonitorView) error) error
}

// MonitorView reads the persisted monitor within one transaction.
type MonitorView interface {
	// TargetsFrom calls fn with every dictionary entry whose id is at
	// least from, in id order.
	TargetsFrom(from uint32, fn func(id uint32, name string) error) error
	// SnapshotSeq returns the sequence number the parts are folded up to.
	SnapshotSeq() (int64, error)
	// Parts calls fn with every snapshot part.
	Parts(fn func(name string, body []byte) error) error
	// LogSince calls fn with every log entry whose sequence number is
	// greater than seq, in order.
	LogSince(seq int64, fn func(seq int64, body []byte) error) error
}

// MonitorTx writes the persisted monitor within one transaction.
type MonitorTx interface {
	MonitorView
	// AddTargets stores names under the ids first, first+1, ...; first
	// must be the dictionary's current size, which keeps ids dense.
	AddTargets(first uint32, names []string) error
	// AppendLog appends one entry and returns its sequence number, greater
	// than every earlier one.
	AppendLog(body []byte) (int64, error)
	// PutPart stores or replaces a snapshot part; a nil body deletes it.
	PutPart(name string, body []byte) error
	// FoldLog records that the parts hold the state up to seq and deletes
	// log entries up to seq − keep, so readers that lag a little can still
	// catch up from the log rather than reloading the snapshot.
	FoldLog(seq int64, keep int64) error
}

// TxMarker is a monitor that can record marks inside a store transaction,
// so that marks derived from ingested items commit with the records.
// MarkTx writes the marks through tx and returns a function to call after
// the transaction committed (it updates the monitor's memory); when the
// transaction rolls back the function must not be called.
type TxMarker interface {
	MarkTx(ctx context.Context, tx MonitorTx, marks []Mark) (committed func(), err error)
}

// TxMarkStore is a store that commits the marks of an ingest batch in the
// same transaction as its records, through the embedded monitor set here.
type TxMarkStore interface {
	SetTxMarker(m TxMarker)
}

// MonitorSize is what a monitor's data takes in its backend, as the engine
// itself reports it: table and index sizes in SQL, MEMORY USAGE of the
// keys in Redis.
type MonitorSize struct {
	// Dictionary is the target dictionary: names, ids and the indexes
	// that look them up.
	Dictionary int64 `json:"dictionary"`
	// Total is everything the monitor keeps: the dictionary, rounds,
	// buckets, failure reasons, rare-field samples and the log.
	Total int64 `json:"total"`
}

// MonitorSizer is a monitor, or a store persisting the embedded one, that
// can report what its data takes.
type MonitorSizer interface {
	MonitorSize(ctx context.Context) (*MonitorSize, error)
}
