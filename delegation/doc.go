// Package delegation keeps a zone's delegation in its parent current through
// RFC 2136 dynamic updates signed with TSIG (RFC 8945): the NS records of the
// zone cut and the glue (A and AAAA) of the nameserver names below the cut;
// and publishes the CDS and CDNSKEY records that let the parent follow the
// zone's DNSSEC keys (RFC 7344, RFC 8078).
//
// In: the parent server's address, a TSIG key, and for each zone the
// delegation wanted (NS names and their addresses), handed to a
// sync (one signed UPDATE). A
// Syncer (the parent option) makes those from the zones' NS records and
// what their index snapshot answers for the nameserver names, for each
// forward zone not nested in another of the block, and syncs at each
// change and every five minutes, with a backoff on failure and the metric
// parent_updates_total. NewCDS asks the dnssec plugin (a Signer) for each
// zone's keys.
//
// Out: UPDATE messages to the parent. The package changes only what it
// owns: the records it wrote, which it remembers in the parent itself, in a
// TXT record (like external-dns's registry), so a restart or another replica knows them. The registry sits
// at <zone relative to the parent>._k8s-gateway-delegation.<parent>, outside
// the zone cut, where the parent answers it. A record that the
// parent holds and the registry does not list is never removed, and a record
// already there is not added twice (RFC 2136 §3.4.2.2 ignores duplicates).
// Each sync sends one UPDATE, with a prerequisite on the registry's content,
// so two replicas racing on one parent cannot both apply a stale plan: the
// loser gets NXRRSET, reads the registry again and retries.
//
// Layer: beside source and persist, above index (snapshots), which it
// imports.
package delegation
