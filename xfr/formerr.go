package xfr

import (
	"context"
	"strings"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/transfer"
	"github.com/miekg/dns"
)

// Guarded is the server block's transfer plugin with a check in front: an
// IXFR request for one of the plugin's zones whose authority section is not
// one SOA record (the requester's version, which RFC 1995 §3 makes
// mandatory) is answered FORMERR, where the transfer plugin answers
// SERVFAIL. The transfer plugin still decides first what it refuses (a
// requester it does not allow, UDP): only its answer to the malformed
// request is replaced.
//
// It stands in the chain where the transfer plugin does, as the Next of the
// plugin before it, without taking its name: other plugins (file, auto,
// secondary) find the transfer plugin by name and need its type.
type Guarded struct {
	Transfer *transfer.Transfer
	// Ours reports whether zone (lower case, fully qualified) is one the
	// plugin transfers.
	Ours func(zone string) bool
}

// Guard returns next guarded when it is the transfer plugin, else next.
func Guard(next plugin.Handler, ours func(zone string) bool) plugin.Handler {
	if t, ok := next.(*transfer.Transfer); ok {
		return Guarded{Transfer: t, Ours: ours}
	}
	return next
}

// Name implements plugin.Handler; not the transfer plugin's name, which
// stays its own.
func (g Guarded) Name() string { return "k8s_gateway_transfer" }

// ServeDNS implements plugin.Handler.
func (g Guarded) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	if !g.malformedIXFR(r) {
		return g.Transfer.ServeDNS(ctx, w, r)
	}
	rw := &wroteWriter{ResponseWriter: w}
	rc, err := g.Transfer.ServeDNS(ctx, rw, r)
	if rc == dns.RcodeServerFailure && !rw.wrote {
		return dns.RcodeFormatError, nil // the server writes it
	}
	return rc, err
}

// malformedIXFR reports whether r asks an IXFR of a zone of the plugin
// without exactly one SOA record in its authority section.
func (g Guarded) malformedIXFR(r *dns.Msg) bool {
	if len(r.Question) != 1 || r.Question[0].Qtype != dns.TypeIXFR || !g.Ours(strings.ToLower(r.Question[0].Name)) {
		return false
	}
	if len(r.Ns) != 1 {
		return true
	}
	_, ok := r.Ns[0].(*dns.SOA)
	return !ok
}

// wroteWriter notes whether a reply was written.
type wroteWriter struct {
	dns.ResponseWriter
	wrote bool
}

func (w *wroteWriter) WriteMsg(m *dns.Msg) error {
	w.wrote = true
	return w.ResponseWriter.WriteMsg(m)
}

func (w *wroteWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}
