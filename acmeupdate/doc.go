// Package acmeupdate accepts RFC 2136 dynamic updates for ACME DNS-01
// challenges, authenticated with TSIG (RFC 8945), checked against the
// tenancy policy of the zone, and stored in the cluster as external-dns
// DNSEndpoint objects.
//
// # Contract
//
// UPDATE messages come on a listener of the package's own (Listen, the
// updates block's listen address, UDP and TCP), never through CoreDNS: a
// TSIG MAC covers the bytes of the message as they arrived (RFC 8945 §4.3),
// and CoreDNS hands a plugin only the parsed message. Its server does verify
// TSIG over the bytes, but with a static map of secrets fixed when the
// server starts, while keys here come and go with Secrets; and it parses a
// whole message before any plugin could bound the work. Searching the MAC
// over re-encodings of the parsed message costs a search per forged message
// and accepts altered bytes, so it is not done. The listener hands the raw
// message to Updater.Handle, which returns the reply; a reload shares the
// sockets, the newest Updater answering.
//
// The listener answers at most 64 UDP messages and 64 TCP connections at
// once. A TCP connection must prove a key with its first message (a MAC and
// time that verify, on a message not seen before), sent within 2 s, or it is
// answered and closed; a proven one carries at most 16 messages of 5 s
// each. Unproven connections count apart: at most 32 of the 64 (the others
// are kept for proven ones) and 4 of one address (8 with its proven ones);
// when those 32 are taken, a new connection takes the place of the oldest
// unproven one of the address holding the most, if that is more than its
// own address holds. A panic answering a message is logged and answered
// SERVFAIL. The work per message is bounded before it is done:
//
//  0. Limits, on the header alone: a message over Limits.MaxMessage
//     bytes, or with more than Limits.MaxPrereqs prerequisites,
//     Limits.MaxRecords updates or two additional records: REFUSED,
//     unsigned. A zone section of more than two records: FORMERR. Then one
//     pass over the bytes, without following compression pointers, finds
//     the TSIG RR, which must be the last record (else FORMERR).
//
// Then, in the order of RFC 2136 §3, with TSIG first:
//
//  1. TSIG (RFC 8945 §5.2), one HMAC over the bytes that arrived (the TSIG
//     RR removed, ARCOUNT one less, the ID the original one, then the TSIG
//     variables as sent). No TSIG: REFUSED, never applied. A key that is
//     not known, or whose algorithm differs from the request's: NOTAUTH with
//     TSIG error BADKEY. A wrong or truncated MAC: NOTAUTH, BADSIG. A time
//     signed more than min(request fudge, Config.Fudge) before the
//     server's clock, or more than min(request fudge, 10 s) after it:
//     NOTAUTH, BADTIME, with the server's time in the TSIG other data,
//     signed. Only hmac-sha256, hmac-sha384 and hmac-sha512 are accepted.
//     Only a message whose MAC verified is parsed; every reply to it is
//     signed.
//  2. Zone section (§3.1): exactly one RR of type SOA, else FORMERR; a zone
//     that is not one of the block's: NOTAUTH.
//  3. Replays: the MAC is remembered until the time signed plus
//     Config.Fudge (whatever the request's fudge), within a quota per
//     namespace and one for all: seen before, or a full quota: REFUSED. A
//     replay is refused before the rate: it costs its tenant nothing.
//  4. Rates: the key's namespace's (all its keys share it) and the global
//     one: REFUSED.
//  5. Prerequisites (§3.2): FORMERR, NOTZONE, NXDOMAIN, YXDOMAIN, NXRRSET,
//     YXRRSET, checked against the zone as this replica answers it (the
//     index and this replica's overlay, see below), without wildcards.
//  6. Prescan of the update section (§3.4.1): NOTZONE, FORMERR.
//  7. Scope (§3.3): by default only TXT records at _acme-challenge.<name>,
//     <name> in the zone and free of wildcards; adds of class IN with a TTL
//     within Config.MaxTTL and values within Config.MaxTXT bytes; deletes of
//     one TXT value (class NONE) or of the TXT RRset (class ANY). Anything
//     else, including a delete of every RRset of a name: REFUSED.
//  8. Ownership: the key's namespace must be allowed to publish <name>
//     (Authorizer): REFUSED otherwise. An Authorizer that is also a
//     Completer is asked first, before the prerequisites, whether the data
//     it decides on is whole; while it is not: SERVFAIL, nothing applied.
//  9. Storage (§3.4.2): each owner name is one DNSEndpoint in the key's
//     namespace, labelled as the plugin's; only such objects are changed or
//     deleted. A failed write: SERVFAIL. Updates are atomic per owner name;
//     an update naming several owner names may apply to some of them only
//     when the API server fails half-way.
//
// Every refusal is counted in
// coredns_k8s_gateway_update_rejected_total{zone,reason}. Those of steps 5
// to 9, of a message known to be its key's and new, are logged and reported
// to Config.OnReject (the plugin turns them into an Event for the tenant);
// the others may come from anyone who knows a key's name, and are logged at
// most once a second, never reported.
//
// Updates naming the same owner names (prerequisites included) wait for
// each other; no lock is shared by all updates, so neither a slow API call
// nor an ownership walk of one name holds the others.
//
// # Answering at once
//
// An accepted update is answered at once by the replica that took it: the
// Overlay holds the values the store really added at each updated name (a
// delete of a value the plugin did not write records nothing), and the
// plugin's ServeDNS asks Updater.Answer before answering a TXT query. The
// answer is the TXT RRset the index shows with this replica's additions on
// top, so the values other replicas wrote appear as soon as this replica's
// index has them. The overlay only adds: a value the index shows is never
// hidden (a value deleted through this replica and added again through
// another is in the cluster), and a delete is answered once the index has
// it. The entry steps aside as soon as the index shows its values, or after
// Config.OverlayHold. The query path reads it without a lock (an immutable
// map behind an atomic pointer, replaced by each accepted update). The
// zone's serial and AXFR change only when the DNSEndpoint comes back
// through the informer, so every replica serves the same zone.
//
// # Keys
//
// Keys come from the Corefile (the secret read from a file) and, when
// enabled, from Secrets carrying the label SecretLabel: the key name is
// <secret>.<namespace>., its secret the Secret's data "secret" (base64, as
// tsig-keygen prints it and as cert-manager's tsigSecretSecretRef reads it),
// its algorithm data "algorithm" (default hmac-sha256). A key is bound to
// the namespace of its Secret, or to the namespace the Corefile names. In
// the one namespace of tenant_secrets (the platform team's), a Secret's key
// is bound to the namespace its label k8s-gateway.dns/tenant names, and
// there only (one of the tenants listed, when they are); a Secret there
// without the label gives no key, and so does a Secret elsewhere whose label
// names another namespace than its own. The Secrets are read only in the
// namespaces of secrets and tenant_secrets (every namespace for secrets
// without any): RBAC cannot narrow Secrets to a label.
//
// # Replays
//
// The MACs of verified requests are remembered for the fudge window, per
// process: a replica does not know the MACs another replica saw. A message
// replayed to another replica within the window is applied there again;
// with ACME's values (one per challenge) that re-adds a value its owner may
// have removed, which the janitor removes after Config.Expire.
package acmeupdate
