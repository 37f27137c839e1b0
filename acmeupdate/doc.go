// Package acmeupdate accepts RFC 2136 dynamic updates for ACME DNS-01
// challenges, authenticated with TSIG (RFC 8945), checked against the
// tenancy policy of the zone, and stored in the cluster as external-dns
// DNSEndpoint objects.
//
// # Contract
//
// The plugin hands every message with opcode UPDATE for one of its zones to
// Updater.ServeDNS. The Updater always writes the reply itself (signed with
// the key of the request when the request's TSIG verified) and returns
// (dns.RcodeSuccess, nil) as CoreDNS plugins do once they have written.
//
// A message is processed in the order of RFC 2136 §3, with TSIG first:
//
//  1. TSIG (RFC 8945 §5.2). No TSIG: REFUSED, never applied. A key that is
//     not known, or whose algorithm differs from the request's: NOTAUTH with
//     TSIG error BADKEY. A wrong MAC: NOTAUTH, BADSIG. A time signed outside
//     min(request fudge, Config.Fudge) of the server's clock: NOTAUTH,
//     BADTIME, with the server's time in the TSIG other data, signed. A MAC
//     seen before within that window (a replay): REFUSED, signed. Only
//     hmac-sha256, hmac-sha384 and hmac-sha512 are accepted.
//  2. Zone section (§3.1): exactly one RR of type SOA, else FORMERR; a zone
//     that is not one of the block's: NOTAUTH.
//  3. Rate and size limits per key: REFUSED.
//  4. Prerequisites (§3.2): FORMERR, NOTZONE, NXDOMAIN, YXDOMAIN, NXRRSET,
//     YXRRSET, checked against the zone as this replica answers it (the
//     index and this replica's overlay, see below), without wildcards.
//  5. Prescan of the update section (§3.4.1): NOTZONE, FORMERR.
//  6. Scope (§3.3): by default only TXT records at _acme-challenge.<name>,
//     <name> in the zone and free of wildcards; adds of class IN with a TTL
//     within Config.MaxTTL and values within Config.MaxTXT bytes; deletes of
//     one TXT value (class NONE) or of the TXT RRset (class ANY). Anything
//     else, including a delete of every RRset of a name: REFUSED.
//  7. Ownership: the key's namespace must be allowed to publish <name>
//     (Authorizer): REFUSED otherwise.
//  8. Storage (§3.4.2): each owner name is one DNSEndpoint in the key's
//     namespace, labelled as the plugin's; only such objects are changed or
//     deleted. A failed write: SERVFAIL. Updates are atomic per owner name;
//     an update naming several owner names may apply to some of them only
//     when the API server fails half-way.
//
// Every refusal is logged, counted in
// coredns_k8s_gateway_update_rejected_total{zone,reason} and reported to
// Config.OnReject (the plugin turns it into an Event for the tenant).
//
// # Answering at once
//
// An accepted update is answered at once by the replica that took it: the
// Overlay holds the change the store really made at each updated name (the
// values added to and removed from the plugin's DNSEndpoint; a delete of a
// value the plugin did not write records nothing), and the plugin's ServeDNS
// asks Updater.Answer before answering a TXT query. The answer is the TXT
// RRset the index shows with this replica's change on top, so the values
// other replicas wrote appear as soon as this replica's index has them. The
// entry is dropped as soon as the index shows the change, or after
// Config.OverlayHold. The zone's serial and AXFR change only when the
// DNSEndpoint comes back through the informer, so every replica serves the
// same zone.
//
// # Keys
//
// Keys come from the Corefile (the secret read from a file) and, when
// enabled, from Secrets carrying the label SecretLabel: the key name is
// <secret>.<namespace>., its secret the Secret's data "secret" (base64, as
// tsig-keygen prints it and as cert-manager's tsigSecretSecretRef reads it),
// its algorithm data "algorithm" (default hmac-sha256). A key is bound to
// the namespace of its Secret, or to the namespace the Corefile names.
//
// # Replays
//
// The MACs of verified requests are remembered for the fudge window, per
// process: a replica does not know the MACs another replica saw. A message
// replayed to another replica within the window is applied there again;
// with ACME's values (one per challenge) that re-adds a value its owner may
// have removed, which the janitor removes after Config.Expire.
package acmeupdate
