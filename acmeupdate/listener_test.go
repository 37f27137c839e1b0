package acmeupdate

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestListenerSurvivesHandlerPanic: a panic of the handler, over UDP and
// TCP, is answered SERVFAIL and the listener goes on answering (it has no
// CoreDNS server around it to recover).
func TestListenerSurvivesHandlerPanic(t *testing.T) {
	l, err := Listen("127.0.0.1:0", 4096, func(_ context.Context, msg []byte) []byte {
		m := new(dns.Msg)
		if err := m.Unpack(msg); err == nil && len(m.Ns) > 0 {
			panic("a bug on hostile input")
		}
		return plainReply(header{id: m.Id, opcode: dns.OpcodeUpdate}, dns.RcodeRefused)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	bad := new(dns.Msg).SetUpdate("example.com.")
	bad.Insert([]dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: "x.example.com.", Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: []string{"v"}}})
	for _, proto := range []string{"udp", "tcp"} {
		c := &dns.Client{Net: proto, Timeout: 2 * time.Second}
		for i, tc := range []struct {
			msg   *dns.Msg
			rcode int
		}{{bad, dns.RcodeServerFailure}, {bad, dns.RcodeServerFailure}, {new(dns.Msg).SetUpdate("example.com."), dns.RcodeRefused}} {
			tc.msg.Id = dns.Id()
			r, _, err := c.Exchange(tc.msg, l.Addr())
			if err != nil {
				t.Fatalf("%s message %d: %v", proto, i, err)
			}
			if r.Rcode != tc.rcode || (tc.rcode == dns.RcodeServerFailure && r.Id != tc.msg.Id) {
				t.Errorf("%s message %d: rcode %s id %d, want %s id %d", proto, i, dns.RcodeToString[r.Rcode], r.Id, dns.RcodeToString[tc.rcode], tc.msg.Id)
			}
		}
	}
	if _, err := net.Dial("tcp", l.Addr()); err != nil {
		t.Fatalf("the TCP listener is gone: %v", err)
	}
}
