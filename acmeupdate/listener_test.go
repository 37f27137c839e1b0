package acmeupdate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestListenerSurvivesHandlerPanic: a panic of the handler, over UDP and
// TCP, is answered SERVFAIL and the listener goes on answering (it has no
// CoreDNS server around it to recover).
func TestListenerSurvivesHandlerPanic(t *testing.T) {
	l, err := Listen("127.0.0.1:0", 4096, func(_ context.Context, msg []byte) ([]byte, bool) {
		m := new(dns.Msg)
		if err := m.Unpack(msg); err == nil && len(m.Ns) > 0 {
			panic("a bug on hostile input")
		}
		return plainReply(header{id: m.Id, opcode: dns.OpcodeUpdate}, dns.RcodeRefused), false
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

// The IDs of the test listener's messages: a message proving its key, one
// that does not, and one that does not and is held by the handler until the
// test ends (a connection the test knows the listener holds).
const (
	idProven uint16 = 1
	idForged uint16 = 2
	idHeld   uint16 = 3
)

// testListener serves a handler that says proven for idProven only, and
// holds idHeld messages, each reported on held, until the test ends.
func testListener(t *testing.T) (l *Listening, held chan struct{}) {
	t.Helper()
	held, release := make(chan struct{}, 256), make(chan struct{})
	l, err := Listen("127.0.0.1:0", 4096, func(_ context.Context, msg []byte) ([]byte, bool) {
		h, _ := readHeader(msg)
		switch h.id {
		case idProven:
			return plainReply(h, dns.RcodeSuccess), true
		case idHeld:
			held <- struct{}{}
			<-release
		}
		return plainReply(h, dns.RcodeRefused), false
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		close(release)
		l.Close()
	})
	return l, held
}

// tcpFrom opens a TCP connection to l from the loopback address from.
func tcpFrom(t *testing.T, l *Listening, from string) *dns.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 2 * time.Second}
	c, err := d.Dial("tcp", l.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &dns.Conn{Conn: c}
}

// exchange sends a message of id on c and returns the reply's rcode, or -1
// when the connection gives none.
func exchange(c *dns.Conn, id uint16) int {
	c.SetDeadline(time.Now().Add(2 * time.Second))
	m := new(dns.Msg).SetUpdate("example.com.")
	m.Id = id
	if c.WriteMsg(m) != nil {
		return -1
	}
	r, err := c.ReadMsg()
	if err != nil || r.Id != id {
		return -1
	}
	return r.Rcode
}

// hold sends a held message on c and waits until the handler has it.
func hold(t *testing.T, c *dns.Conn, held chan struct{}) {
	t.Helper()
	m := new(dns.Msg).SetUpdate("example.com.")
	m.Id = idHeld
	if err := c.WriteMsg(m); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(5 * time.Second):
		t.Fatal("the held message did not reach the handler")
	}
}

// closedOf returns how many of conns the listener closed (they read EOF,
// where the others wait for a message that does not come).
func closedOf(conns []*dns.Conn) int {
	deadline := time.Now().Add(200 * time.Millisecond)
	n := 0
	for _, c := range conns {
		c.SetReadDeadline(deadline)
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		if err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
			n++
		}
	}
	return n
}

// TestListenerUnprovenClosed: a connection whose first message does not
// prove a key is answered, then closed; one whose first message does is
// kept for the next ones.
func TestListenerUnprovenClosed(t *testing.T) {
	l, _ := testListener(t)
	c := tcpFrom(t, l, "127.0.0.1")
	if rc := exchange(c, idForged); rc != dns.RcodeRefused {
		t.Fatalf("first message: rcode %d, want REFUSED", rc)
	}
	if rc := exchange(c, idProven); rc != -1 {
		t.Errorf("a second message after an unproven first one: rcode %d, want the connection closed", rc)
	}
	c = tcpFrom(t, l, "127.0.0.1")
	for i, id := range []uint16{idProven, idForged, idProven} {
		if rc := exchange(c, id); rc < 0 {
			t.Fatalf("message %d of a proven connection not answered", i+1)
		}
	}
}

// TestListenerConnectionsPerAddress: one address holds at most maxUnprovIP
// unproven connections, and maxConnsIP with its proven ones; more are closed
// at once, while another address is still answered.
func TestListenerConnectionsPerAddress(t *testing.T) {
	l, held := testListener(t)
	for range maxUnprovIP {
		hold(t, tcpFrom(t, l, "127.0.0.2"), held)
	}
	if rc := exchange(tcpFrom(t, l, "127.0.0.2"), idProven); rc != -1 {
		t.Errorf("unproven connection %d of 127.0.0.2 answered (%d), want it closed", maxUnprovIP+1, rc)
	}
	if rc := exchange(tcpFrom(t, l, "127.0.0.3"), idProven); rc != dns.RcodeSuccess {
		t.Error("127.0.0.3 not answered while 127.0.0.2 holds its share")
	}
	// Proven connections count apart: an address keeps maxConnsIP in all.
	for i := range maxConnsIP - maxUnprovIP {
		if rc := exchange(tcpFrom(t, l, "127.0.0.4"), idProven); rc != dns.RcodeSuccess {
			t.Fatalf("proven connection %d of 127.0.0.4: %d", i+1, rc)
		}
	}
	for range maxUnprovIP {
		hold(t, tcpFrom(t, l, "127.0.0.4"), held)
	}
	if rc := exchange(tcpFrom(t, l, "127.0.0.4"), idProven); rc != -1 {
		t.Errorf("connection %d of 127.0.0.4 answered (%d), want it closed", maxConnsIP+1, rc)
	}
}

// TestListenerUnprovenShare: addresses holding every unproven slot cannot
// keep a client of another address out: its connection takes the place of
// the oldest unproven one of the address holding the most; proven
// connections keep the slots held for them.
func TestListenerUnprovenShare(t *testing.T) {
	l, held := testListener(t)
	var hogs []*dns.Conn
	for a := range maxUnproven / maxUnprovIP {
		for range maxUnprovIP {
			c := tcpFrom(t, l, fmt.Sprintf("127.0.1.%d", a+1))
			hold(t, c, held)
			hogs = append(hogs, c)
		}
	}
	if rc := exchange(tcpFrom(t, l, "127.0.2.1"), idProven); rc != dns.RcodeSuccess {
		t.Fatalf("a client of its own address while the unproven share is full: %d", rc)
	}
	if n := closedOf(hogs); n != 1 {
		t.Errorf("%d unproven connections closed to make room, want 1", n)
	}
	if rc := exchange(tcpFrom(t, l, "127.0.1.2"), idProven); rc != -1 {
		t.Errorf("a newcomer of an address holding its unproven share took a place: %d", rc)
	}
	// The proven share: connections that proved a key, beyond the unproven
	// share, from addresses of their own.
	for i := range maxConns - maxUnproven {
		if rc := exchange(tcpFrom(t, l, fmt.Sprintf("127.0.3.%d", i+1)), idProven); rc != dns.RcodeSuccess {
			t.Fatalf("proven connection %d while the unproven share is full: %d", i+1, rc)
		}
	}
}
