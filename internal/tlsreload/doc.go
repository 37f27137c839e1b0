// Package tlsreload serves a TLS certificate that follows its files: the tls
// plugin reads its certificate once, so a renewed one (a Secret that
// cert-manager rewrote, mounted in the pod) would be served only after a
// restart. A Reloader reads CERT and KEY again at a handshake, at most every
// ten seconds, and serves a new pair once it loads; a pair that does not load
// (a half-written file) is logged and the last good one kept.
//
// In: the paths of a certificate and its key. Out: a
// tls.Config.GetCertificate, and the TLS config identity that the server
// blocks (views) sharing a listener must share; one Reloader per pair of
// files in the process. The root's tlsreload.go wires it into a server
// block (the tls_reload option).
package tlsreload
