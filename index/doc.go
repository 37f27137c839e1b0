// Package index holds the plugin's records: names to RRsets, per zone, as
// immutable snapshots that queries read without locks.
//
// In: the records of one object key at a time (Update, UpdateClaim), with
// the claim of its owner (a namespace and a creation time), and the domains
// delegated to a namespace (SetDomains). The ownership policy (union, first,
// delegated) decides which claims on a name win; merge unites or drops
// records that several objects publish. Health and priority (health.go):
// a claim may be Unhealthy and has a Priority, and the objects of a key
// prefix (a cluster) may be set down; at a name, the healthy contributions
// of the best priority answer, or all of them when none is healthy (fail
// open). The choice is made when a name is built, never at query time.
// Steering (steer.go): when the contributions left carry weights or
// locations (Claim.Weight, Claim.Location), a table of targets is packed
// with the name, and LookupFor answers one target chosen for the client
// (its location, then a default, then all; then by weight), scanning the
// table without allocating.
//
// Views (shared.go): the indexes of the views of one cluster may share a
// Shared, which numbers their objects and names, keeps the objects' keys
// and usual claims once, and the records in wire form that views agree on;
// each index keeps per name and object a few bytes at those numbers, and
// its own nodes, snapshots and serials.
//
// Out: a Snapshot after each Flush, with Lookup (a result kind: answer,
// delegation, CNAME, wildcard, NODATA, NXDOMAIN), the zone's records in
// transfer order, and per-zone SOA serials that grow with each change.
//
// Callers: the plugin (which owns the index and reads snapshots) and the
// watch layer's sinks (which write). Listener callbacks: SerialChanged and
// Rejected run after the index's lock is released; Conflict and Conflicted
// run under it and must not call back into the index.
//
// The package has no Kubernetes imports.
package index
