// Package xfr serves zone transfers (RFC 5936 AXFR, RFC 1995 IXFR) of the
// plugin's zones and sends their NOTIFY (RFC 1996).
//
// In: an index snapshot per transfer (Histories.Transfer), or the SOA and
// records of a zone without history (Whole, the catalog). Out: the channel
// of record batches that CoreDNS's transfer plugin reads, the SOA first and
// last. The choice: the SOA alone when the requester's serial is current
// (RFC 1982 arithmetic); for IXFR, the condensed differences since its
// serial when the history of what transfers served knows that serial and
// they are smaller than the zone; otherwise the whole zone (RFC 1995 §4).
// A whole zone comes from one snapshot, so a change during a transfer
// never tears it.
//
// The history (history.go) serves, under a serial, the content of the
// snapshot the serial was assigned in (Histories.Assigned), or without one
// the content first served under it: a change within the second of a serial
// is transferred under the next serial, so one serial always stands for one
// content, and replicas that saw the same changes give it the same. It keeps
// at most 128 versions a zone, and differences no larger than the zone; the
// instance a reload starts goes on with the old one's (Histories.Adopt).
//
// The Notifier sends NOTIFY to the addresses of the server block's transfer
// plugin (targets.go), to every one at once with its own tries: at each
// serial change, and again after a start (OnStartup runs before the new
// instance listens). Guard puts a check in front of the transfer plugin: an
// IXFR request without the requester's SOA is FORMERR (RFC 1995 §3).
//
// Layer: beside source and persist, above index, which it imports.
package xfr
