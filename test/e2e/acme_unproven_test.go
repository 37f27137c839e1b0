//go:build e2e

package e2e

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// Unproven TCP: clients without a key holding the TCP connections of the
// updates listener. unprovenConns connections from unprovenAddrs loopback
// addresses (127.0.0.2 and up, as clients behind a few NAT addresses), each
// sending an unsigned UPDATE every 3 s on its connection, and opening a
// new one as soon as the server closes it; meanwhile a tenant sends signed
// updates over TCP from 127.0.0.1. signedUnderUnproven returns how long each
// took, from the connect to the reply.

const (
	unprovenConns = 64
	unprovenAddrs = 8
	// unprovenBound is how long a signed update may take under them.
	unprovenBound = time.Second
)

// unprovenFlood starts the unproven clients against addr; stop ends them
// and returns the unsigned messages answered.
func unprovenFlood(t *testing.T, zone, addr string) (stop func() int) {
	t.Helper()
	m := new(dns.Msg)
	m.SetUpdate(zone)
	rr, err := dns.NewRR("_acme-challenge.unproven." + zone + " 60 IN TXT x")
	if err != nil {
		t.Fatal(err)
	}
	m.Insert([]dns.RR{rr})
	unsigned, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	framed := append(binary.BigEndian.AppendUint16(nil, uint16(len(unsigned))), unsigned...) // #nosec G115
	done := make(chan struct{})
	var wg sync.WaitGroup
	var answered atomic.Int64
	for i := range unprovenConns {
		from := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i%unprovenAddrs))}
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := net.Dialer{LocalAddr: from, Timeout: time.Second}
			wait := func(d time.Duration) bool {
				select {
				case <-done:
					return false
				case <-time.After(d):
					return true
				}
			}
			for {
				c, err := d.Dial("tcp", addr)
				if err != nil {
					if !wait(50 * time.Millisecond) {
						return
					}
					continue
				}
				go func() { <-done; c.Close() }()
				first := time.Duration(rand.Int64N(int64(3 * time.Second)))
				for n := 0; ; n++ {
					if !wait(first) {
						c.Close()
						return
					}
					first = 3 * time.Second
					_ = c.SetDeadline(time.Now().Add(5 * time.Second))
					if _, err := c.Write(framed); err != nil {
						break
					}
					var size [2]byte
					if _, err := io.ReadFull(c, size[:]); err != nil {
						break
					}
					if _, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint16(size[:]))); err != nil {
						break
					}
					answered.Add(1)
				}
				c.Close()
				if !wait(10 * time.Millisecond) {
					return
				}
			}
		}()
	}
	return func() int {
		close(done)
		wg.Wait()
		return int(answered.Load())
	}
}

// tcpUpdate sends a signed update over a new TCP connection from 127.0.0.1
// and returns the rcode (-1: no reply) and how long it took.
func tcpUpdate(addr string, wire []byte) (int, time.Duration) {
	start := time.Now()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return -1, time.Since(start)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(wire))), wire...)); err != nil { // #nosec G115
		return -1, time.Since(start)
	}
	var size [2]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return -1, time.Since(start)
	}
	buf := make([]byte, binary.BigEndian.Uint16(size[:]))
	if _, err := io.ReadFull(c, buf); err != nil {
		return -1, time.Since(start)
	}
	r := new(dns.Msg)
	if err := r.Unpack(buf); err != nil {
		return -1, time.Since(start)
	}
	return r.Rcode, time.Since(start)
}

// signedUnderUnproven sends n signed updates (each a new value) while the
// unproven clients run, and returns how long each took; an update that got
// no NOERROR fails the test.
func signedUnderUnproven(t *testing.T, a acme, addr string, n int) []time.Duration {
	t.Helper()
	stop := unprovenFlood(t, a.zone, addr)
	time.Sleep(4 * time.Second) // every unproven client has sent its first message
	took, failed := signedUpdates(t, a, addr, n)
	answered := stop()
	t.Logf("%d unproven connections from %d addresses: %d unsigned messages answered; %d of %d signed updates answered NOERROR, in min %s, median %s, max %s",
		unprovenConns, unprovenAddrs, answered, n-failed, n, slices.Min(took).Round(time.Microsecond), medianDuration(took).Round(time.Microsecond), slices.Max(took).Round(time.Microsecond))
	return took
}

// signedUpdates sends n signed updates over TCP, each adding a new value
// (timed) and deleting it again (untimed: a name holds 16 at most); it
// returns how long each add took and how many got no NOERROR, which fails
// the test.
func signedUpdates(t *testing.T, a acme, addr string, n int) (took []time.Duration, failed int) {
	t.Helper()
	name := "_acme-challenge." + a.domainA + "."
	for i := range n {
		value := fmt.Sprintf("signed-%d-%d", i, time.Now().UnixNano())
		rc, d := tcpUpdate(addr, signedUpdate(t, a.zone, a.coreA, name, value, time.Now()))
		if rc != dns.RcodeSuccess {
			t.Errorf("signed update %d: rcode %d (-1: no reply) after %s", i+1, rc, d.Round(time.Millisecond))
			failed++
		}
		took = append(took, d)
		del := new(dns.Msg)
		del.SetUpdate(a.zone)
		del.Remove([]dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeTXT, Class: dns.ClassNONE}, Txt: []string{value}}})
		wire, _ := signedMsg(t, del, a.coreA)
		if rc, _ := tcpUpdate(addr, wire); rc != dns.RcodeSuccess && failed == 0 {
			t.Errorf("deleting %s: rcode %d", value, rc)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return took, failed
}

func medianDuration(v []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(v))
	return s[len(s)/2]
}

// TestACMEHostileUnprovenTCP: 64 connections without a key, from 8
// addresses, cannot delay a signed update over TCP by more than a second
// (they held every slot and kept it out: connection reset).
func TestACMEHostileUnprovenTCP(t *testing.T) {
	a := acmeSetup(t)
	addr := fmt.Sprintf("127.0.0.1:%d", a.s.updatePort(t))
	took := signedUnderUnproven(t, a, addr, 10)
	if worst := slices.Max(took); worst > unprovenBound {
		t.Errorf("a signed update took %s under %d unproven connections, want at most %s", worst.Round(time.Millisecond), unprovenConns, unprovenBound)
	}
}
