package gateway

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/transfer"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// xtTransferPlugin returns CoreDNS's transfer plugin set up from block (a
// Corefile directive with its zones as arguments) in front of g, as a server
// block with both would have it.
func xtTransferPlugin(t *testing.T, g *Gateway, block string) *transfer.Transfer {
	t.Helper()
	tr := testutil.TransferPlugin(t, block, g)
	tr.Transferers = []transfer.Transferer{g}
	return tr
}

// xtServer serves h on 127.0.0.1 over UDP and TCP on one port and returns the address.
func xtServer(t *testing.T, h plugin.Handler) string {
	t.Helper()
	handler := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		// As CoreDNS's server does: a plugin that wrote nothing gets its rcode sent.
		rc, _ := h.ServeDNS(context.Background(), w, r)
		if !plugin.ClientWrite(rc) {
			m := new(dns.Msg)
			m.SetRcode(r, rc)
			w.WriteMsg(m)
		}
	})
	var pc net.PacketConn
	var l net.Listener
	for range 20 {
		var err error
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if l, err = net.Listen("tcp", pc.LocalAddr().String()); err == nil {
			break
		}
		pc.Close()
		pc = nil
	}
	if pc == nil {
		t.Fatal("no free port")
	}
	udp := &dns.Server{PacketConn: pc, Handler: handler}
	tcp := &dns.Server{Listener: l, Handler: handler}
	go udp.ActivateAndServe()
	go tcp.ActivateAndServe()
	t.Cleanup(func() { udp.Shutdown(); tcp.Shutdown() })
	return pc.LocalAddr().String()
}

// xtAXFR transfers zone from addr over TCP with dns.Transfer.
func xtAXFR(addr, zone string, ixfrSerial uint32) ([]dns.RR, error) {
	m := new(dns.Msg)
	if ixfrSerial != 0 {
		m.SetIxfr(zone, ixfrSerial, "ns.", "hostmaster.")
	} else {
		m.SetAxfr(zone)
	}
	tr := &dns.Transfer{DialTimeout: 2 * time.Second, ReadTimeout: 5 * time.Second}
	env, err := tr.In(m, addr)
	if err != nil {
		return nil, err
	}
	var out []dns.RR
	for e := range env {
		if e.Error != nil {
			return out, e.Error
		}
		out = append(out, e.RR...)
	}
	return out, nil
}

// TestTransferWire: AXFR and IXFR through CoreDNS's transfer plugin on a real
// TCP connection, and the plugin's refusals.
func TestTransferWire(t *testing.T) {
	g := xtGateway(t, xtZones, xtZone)
	addr := xtServer(t, xtTransferPlugin(t, g, "transfer example.com example.org {\n to *\n}"))
	s := g.index.Snapshot()

	got, err := xtAXFR(addr, "example.com.", 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := xtStrings(xtTransfer(t, g, "example.com.", 0)); !slices.Equal(xtStrings(got), want) {
		t.Errorf("AXFR on the wire:\n%s\nwant\n%s", strings.Join(xtStrings(got), "\n"), strings.Join(want, "\n"))
	}
	got, err = xtAXFR(addr, "example.com.", s.Serial(0))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].String() != s.SOA(0)[0].String() {
		t.Errorf("IXFR from the current serial: %q", xtStrings(got))
	}
	got, err = xtAXFR(addr, "example.com.", s.Serial(0)-100)
	if err != nil {
		t.Fatal(err)
	}
	if want := xtStrings(xtTransfer(t, g, "example.com.", 0)); !slices.Equal(xtStrings(got), want) {
		t.Errorf("IXFR from an old serial (AXFR-style, RFC 1995 §4):\n%s", strings.Join(xtStrings(got), "\n"))
	}

	rcode := func(net string, m *dns.Msg, addr string) string {
		t.Helper()
		c := &dns.Client{Net: net, Timeout: 2 * time.Second}
		r, _, err := c.Exchange(m, addr)
		if err != nil {
			t.Fatalf("%s %s: %v", net, m.Question[0].String(), err)
		}
		return dns.RcodeToString[r.Rcode]
	}
	axfr := func(zone string) *dns.Msg { m := new(dns.Msg); m.SetAxfr(zone); return m }
	// The transfer plugin's zones match by suffix: the nested zone
	// sub.example.com. is transferred under `transfer example.com`, from
	// its own data.
	got, err = xtAXFR(addr, "sub.example.com.", 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := xtStrings(xtTransfer(t, g, "sub.example.com.", 0)); !slices.Equal(xtStrings(got), want) {
		t.Errorf("AXFR of the nested zone:\n%s", strings.Join(xtStrings(got), "\n"))
	}
	// AXFR over UDP: REFUSED (the transfer plugin). Of a name that is not
	// a zone (k8s_gateway answers that one itself, after
	// ErrNotAuthoritative): NOTAUTH (RFC 5936 §2.2.1).
	if rc := rcode("udp", axfr("example.com."), addr); rc != "REFUSED" {
		t.Errorf("AXFR over UDP: %s", rc)
	}
	if rc := rcode("tcp", axfr("www.example.com."), addr); rc != "NOTAUTH" {
		t.Errorf("AXFR of a name that is not a zone: %s", rc)
	}

	// The transfer plugin allows only the addresses of `to`.
	g2 := xtGateway(t, xtZones, xtZone)
	addr2 := xtServer(t, xtTransferPlugin(t, g2, "transfer example.com {\n to 127.0.0.2\n}"))
	if rc := rcode("tcp", axfr("example.com."), addr2); rc != "REFUSED" {
		t.Errorf("AXFR from an address not in `to`: %s", rc)
	}
	// Not synced: SERVFAIL.
	g.ready.Store(false)
	if rc := rcode("tcp", axfr("example.com."), addr); rc != "SERVFAIL" {
		t.Errorf("AXFR before sync: %s", rc)
	}
}

// passThrough is a plugin of a test's chain that hands every query on.
type passThrough struct{ next plugin.Handler }

func (p passThrough) Name() string { return "pass" }
func (p passThrough) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	return p.next.ServeDNS(ctx, w, r)
}

// TestTransferIXFRFormerr: an IXFR request without exactly one SOA record in
// its authority section (RFC 1995 §3) is FORMERR, through the server block's
// chain as CoreDNS builds it, with the transfer plugin first or after another
// plugin; what the transfer plugin refuses first stays REFUSED, and the
// transfer plugin keeps its name and type for the plugins that look it up.
func TestTransferIXFRFormerr(t *testing.T) {
	for _, before := range []bool{false, true} {
		g := xtGateway(t, xtZones, xtZone)
		setup, err := caddy.DirectiveAction("dns", "transfer")
		if err != nil {
			t.Fatal(err)
		}
		c := caddy.NewTestController("dns", "transfer example.com example.net {\n to 127.0.0.1\n}")
		cfg := dnsserver.GetConfig(c)
		if before {
			cfg.AddPlugin(func(next plugin.Handler) plugin.Handler { return passThrough{next} })
		}
		if err := setup(c); err != nil {
			t.Fatalf("transfer setup: %v", err)
		}
		guardTransfers(cfg, g.transfers)
		cfg.AddPlugin(func(plugin.Handler) plugin.Handler { return g })
		// As CoreDNS's server compiles a chain and registers its handlers.
		var chain plugin.Handler
		registry := map[string]plugin.Handler{}
		for _, p := range slices.Backward(cfg.Plugin) {
			chain = p(chain)
			registry[chain.Name()] = chain
		}
		tr, ok := registry["transfer"].(*transfer.Transfer)
		if !ok {
			t.Fatalf("before %v: the handler named transfer is %T", before, registry["transfer"])
		}
		tr.Transferers = []transfer.Transferer{g}
		addr := xtServer(t, chain)

		soa := func(zone string) dns.RR {
			return &dns.SOA{Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET}, Ns: "ns.", Mbox: "h.", Serial: 1}
		}
		a := &dns.A{Hdr: dns.RR_Header{Name: "example.com.", Rrtype: dns.TypeA, Class: dns.ClassINET}, A: net.IPv4(192, 0, 2, 1)}
		for _, tc := range []struct {
			name, net, zone string
			ns              []dns.RR
			want            string
		}{
			{"no SOA", "tcp", "example.com.", nil, "FORMERR"},
			{"an A record instead", "tcp", "example.com.", []dns.RR{a}, "FORMERR"},
			{"two SOA records (refused by the server before any plugin)", "tcp", "example.com.", []dns.RR{soa("example.com."), soa("example.com.")}, "FORMERR"},
			{"the nested zone, no SOA", "tcp", "sub.example.com.", nil, "FORMERR"},
			{"one SOA, an old serial", "tcp", "example.com.", []dns.RR{soa("example.com.")}, "NOERROR"},
			{"over UDP: refused first", "udp", "example.com.", nil, "REFUSED"},
			{"a zone of another plugin: the transfer plugin's answer", "tcp", "example.net.", nil, "SERVFAIL"},
		} {
			m := new(dns.Msg)
			m.SetQuestion(tc.zone, dns.TypeIXFR)
			m.Ns = tc.ns
			cl := &dns.Client{Net: tc.net, Timeout: 2 * time.Second}
			r, _, err := cl.Exchange(m, addr)
			if err != nil {
				t.Fatalf("before %v, %s: %v", before, tc.name, err)
			}
			if got := dns.RcodeToString[r.Rcode]; got != tc.want {
				t.Errorf("before %v, %s: %s, want %s", before, tc.name, got, tc.want)
			}
			if r.Rcode == dns.RcodeFormatError && len(tc.ns) < 2 && (len(r.Question) != 1 || r.Question[0] != m.Question[0]) {
				t.Errorf("before %v, %s: FORMERR without the question: %v", before, tc.name, r.Question)
			}
		}
	}
}
