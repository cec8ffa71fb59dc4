// Package crawlkeeper holds the domain of crawlkeeper: records and their
// identity, ingest and archive semantics, crawl-round progress, the
// reprocessing contract, configuration and error codes, and the interfaces
// that storage, monitor and queue backends implement.
//
// The package imports only the standard library. Each backend lives in its
// own package (sqlite, postgres, mysql, mongodb, redis, nats, ...) and
// implements the interfaces declared here; cmd/crawlkeeper wires them
// together. Conformance suites for every interface live in storetest,
// monitortest and queuetest.
package crawlkeeper
