// Package persist keeps copies of the zones on disk: written atomically
// with a checksum (copy.go), read and checked at startup (Load), and
// written again by a Writer whenever a zone's serial changes, and at least
// once per refresh (writer.go). The plugin answers from the copies
// (Copies.Answering) while its informers list after a restart, each zone
// until its copy is older than its SOA expire, and its live index starts
// from the copies' serials, so that serials never go back across restarts.
//
// In: index snapshots. Out: files, the Copies read (a sealed index), and
// when each copy was written (for the plugin's metrics). Layer: beside
// source; it imports index and miekg/dns only (TestLayers).
package persist
