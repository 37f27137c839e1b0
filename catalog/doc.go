// Package catalog builds an RFC 9432 catalog zone (schema version 2) that
// lists the zones a k8s_gateway block serves, so that secondaries which
// consume catalog zones (BIND 9.18+, Knot 3) pick up every member zone without
// an edit of their configuration.
//
// In: the catalog's name, its serial and SOA timers, and its members (zone
// names, with an optional group and change-of-ownership target).
//
// Out: a Zone, immutable once built: its records in transfer order,
// Lookup, which answers queries for the catalog (SOA, NS, the version
// property, members and their properties, with NXDOMAIN and NODATA as
// RFC 2308 says), and Transfer, its AXFR (or its SOA alone for an IXFR that
// is current). NextSerial gives a catalog's serials in a process, so that
// each reload that changes the catalog moves them forward, and one that
// changes nothing keeps them.
//
// Member IDs are stable: the hex SHA-256 of the member's canonical wire name,
// cut to 16 bytes, so the same zone keeps its ID across restarts and replicas
// and a zone that leaves and comes back gets the same one (RFC 9432 §4.1:
// consumers match members by ID and name).
//
// Layer: above xfr (its transfers) and index (serial arithmetic), which it
// imports.
package catalog
