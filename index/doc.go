// Package index holds the plugin's records: names to RRsets, per zone, as
// immutable snapshots that queries read without locks.
//
// In: the records of one object key at a time (Update, UpdateClaim), with
// the claim of its owner (a namespace and a creation time), and the domains
// delegated to a namespace (SetDomains). The ownership policy (union, first,
// delegated) decides which claims on a name win; merge unites or drops
// records that several objects publish. A quota per tenant (Config.Quota)
// bounds the records of each namespace's objects: one that does not fit in
// what its older objects leave publishes nothing until room is made.
// Health and priority: a claim may be Unhealthy and has a Priority, and the
// objects of a key prefix (a cluster) may be set down (SetDown); at a
// name, the healthy contributions of the best priority answer, or all of
// them when none is healthy (fail open).
// The choice is made when a name is built, never at query time. Steering:
// when the contributions left carry weights or locations (Claim.Weight,
// Claim.Location; at a name several tenants publish, only their clusters'
// count: Claim.ClusterWeight, ClusterLocation), a table of targets is
// packed with the name, and
// LookupFor answers one target chosen for the client (its location, then a
// default, then all; then by weight), scanning the table without
// allocating.
//
// Out: a Snapshot after each Flush, with Lookup (a result kind: answer,
// delegation, CNAME, wildcard, NODATA, NXDOMAIN), the zone's records in
// transfer order, and per-zone SOA serials that grow with each change;
// OwnersBelow, the namespaces admitted at and below a name, for the
// dynamic updates' ownership check.
//
// Inside, an Index composes one type per job, each with its state and its
// tests, and runs the pipeline from an object's records to its names'
// nodes (Index.UpdateClaim and Index.rebuild, update.go; snapshots and
// serials published by publish.go):
//   - objects (objects.go, wire.go): the object table: each object's
//     records in wire form and its claim, by the object's number in the
//     Shared, and the free places of the objects kept apart.
//   - owners (owners.go, below.go): which objects publish at each owner
//     name, the contributions they make there; and per name the count of
//     the namespaces the policy admits below it, which answers OwnersBelow
//     in the name's labels and the answer, without a walk.
//   - rules (policy.go, health.go): who may publish (the policy, the
//     rejected claims and the nameserver names it reserves), health and
//     priority decisions, the merge's conflicts, and telling the listener
//     of them. Steering tables (steer.go) are built from what rules leave.
//   - quota (quota.go): the records each tenant holds and which of its
//     objects it may publish, oldest first; a refused object is held but
//     publishes at no name (owners leaves it out) and is told as a
//     rejection (ReasonQuota).
//   - nodes (nodes.go): the names as the writer sees them: packed nodes
//     (packed.go), empty non-terminals, wildcards, delegations; folded and
//     published into the view's table (tables.go, table.go, arena.go).
//   - serials (serial.go): each zone's SOA serial, its timer, and the
//     announcements.
//
// Views (shared.go, tables.go): the indexes of the views of one cluster
// may share a Shared, which numbers their objects and names, keeps the
// objects' keys and usual claims once, their records in wire form in the
// two variants views agree on, and one table of names that every view's
// snapshots read: a node that several views agree on is one entry and one
// node, with a bit per view. Each index keeps per name and object a few
// bytes at those numbers, and its own serials.
//
// Locks, in order: an Index's mu (the writer's; every job is under it),
// then its tables' mu (a fold or publish into the shared table, which also
// moves the other views' snapshots to the newest table); Shared.mu is taken
// last, alone, for a lookup or a count. The query path takes none.
//
// Callers: the plugin (which owns the index and reads snapshots) and the
// watch layer's sinks (which write). Listener callbacks: SerialChanged and
// Rejected run after the index's lock is released; Conflict and Conflicted
// run under it and must not call back into the index.
//
// The package has no Kubernetes imports.
package index
