// Package persist keeps copies of the zones on disk: written atomically
// with a checksum (copy.go), read and checked at startup, and written again
// by a Writer whenever a zone's serial changes, and at least once per
// refresh (writer.go). The plugin answers from the copies while its
// informers list after a restart.
//
// In: index snapshots. Out: files, and an optional callback per copy
// written. Imports: index and miekg/dns only.
package persist
