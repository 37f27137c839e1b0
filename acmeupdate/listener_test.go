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

// TestListenerConnectionsPerAddress: one address holds at most maxConnsIP
// TCP connections (idle ones last connTimeout): the next is closed at once,
// while another address is still answered, and a connection given back
// makes room.
func TestListenerConnectionsPerAddress(t *testing.T) {
	l, err := Listen("127.0.0.1:0", 4096, func(_ context.Context, msg []byte) []byte {
		h, _ := readHeader(msg)
		return plainReply(h, dns.RcodeRefused)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dial := func(from string) *dns.Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 2 * time.Second}
		c, err := d.Dial("tcp", l.Addr())
		if err != nil {
			t.Fatal(err)
		}
		return &dns.Conn{Conn: c}
	}
	answered := func(c *dns.Conn) bool {
		c.SetDeadline(time.Now().Add(2 * time.Second))
		m := new(dns.Msg).SetUpdate("example.com.")
		if c.WriteMsg(m) != nil {
			return false
		}
		r, err := c.ReadMsg()
		return err == nil && r.Id == m.Id && r.Rcode == dns.RcodeRefused
	}
	var held []*dns.Conn
	for i := range maxConnsIP {
		c := dial("127.0.0.1")
		defer c.Close()
		if !answered(c) {
			t.Fatalf("connection %d of 127.0.0.1 not answered", i+1)
		}
		held = append(held, c)
	}
	extra := dial("127.0.0.1")
	defer extra.Close()
	if answered(extra) {
		t.Errorf("connection %d of 127.0.0.1 answered, want it closed", maxConnsIP+1)
	}
	other := dial("127.0.0.2")
	defer other.Close()
	if !answered(other) {
		t.Error("127.0.0.2 not answered while 127.0.0.1 holds its share")
	}
	held[0].Close()
	deadline := time.Now().Add(2 * time.Second)
	for {
		c := dial("127.0.0.1")
		ok := answered(c)
		c.Close()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a connection given back makes no room")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
