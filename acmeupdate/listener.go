package acmeupdate

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// CoreDNS hands a plugin the parsed message, never the bytes that came, and
// a TSIG MAC covers those bytes. Its server takes TSIG secrets only from a
// static map fixed when the server starts, while the keys here come and go
// with Secrets; and it reads a whole message before any plugin can bound
// the work. So UPDATE messages come on a listener of their own (the updates
// block's listen address, UDP and TCP): the Updater gets the bytes, checks
// the size and counts on the header, finds the TSIG in one pass and computes
// one MAC over what arrived, as BIND does.

// Handler answers one message; a nil reply means none. proven says that the
// sender proved a key with it (a MAC and time that verified, on a message
// not seen before): only such a message lets a TCP connection stay open.
type Handler func(ctx context.Context, msg []byte) (reply []byte, proven bool)

const (
	maxWire      = 65535           // the largest DNS message
	maxWorkers   = 64              // messages over UDP handled at once
	maxConns     = 64              // TCP connections at once
	maxUnproven  = 32              // of them, not proven yet: the others are the provers'
	maxConnsIP   = 8               // TCP connections at once from one address
	maxUnprovIP  = 4               // of them, not proven yet
	maxPerConn   = 16              // messages of one TCP connection
	firstTimeout = 2 * time.Second // for the first message of a TCP connection
	connTimeout  = 5 * time.Second // for each later message of a proven one
)

// listener serves one address; several generations of a Corefile (reloads)
// share it, the newest one answering.
type listener struct {
	addr     string
	udp      net.PacketConn
	tcp      net.Listener
	mu       sync.Mutex
	handlers []*Handler // the newest last
	inline   int        // messages longer than this are answered by the reader
	workers  chan struct{}
	wg       sync.WaitGroup
	open     map[*tcpConn]struct{}     // the TCP connections, closed with the listener
	perIP    map[netip.Addr]*addrConns // the TCP connections of each address
	unproven int                       // the unproven TCP connections
	arrivals uint64                    // the TCP connections accepted so far
}

var listeners = struct {
	sync.Mutex
	m map[string]*listener
}{m: map[string]*listener{}}

// Listening is a Handler serving an address (see Listen).
type Listening struct {
	l *listener
	h *Handler
}

// Addr returns the UDP address served (with the port the system chose for
// port 0).
func (r *Listening) Addr() string { return r.l.udp.LocalAddr().String() }

// Close stops the handler; the last one of an address closes its sockets.
func (r *Listening) Close() { r.l.release(r.h) }

// Listen serves UPDATE messages on addr (host:port, UDP and TCP) with h until
// Close. Messages longer than inline bytes are handed to h by the reader
// itself (h refuses them on their size at once). A later Listen on the same
// address (a reload) takes over the answering and shares the sockets; port
// 0 is never shared.
func Listen(addr string, inline int, h Handler) (*Listening, error) {
	listeners.Lock()
	defer listeners.Unlock()
	l, ok := listeners.m[addr]
	if !ok {
		var err error
		if l, err = listen(addr, inline); err != nil {
			return nil, err
		}
		if _, port, _ := net.SplitHostPort(addr); port != "0" {
			listeners.m[addr] = l
		}
	}
	hp := &h
	l.mu.Lock()
	l.handlers = append(l.handlers, hp)
	l.mu.Unlock()
	return &Listening{l: l, h: hp}, nil
}

func listen(addr string, inline int) (*listener, error) {
	pc, ln, err := listenBoth(addr)
	if err != nil {
		return nil, err
	}
	l := &listener{addr: addr, udp: pc, tcp: ln, inline: inline, open: map[*tcpConn]struct{}{}, perIP: map[netip.Addr]*addrConns{}, workers: make(chan struct{}, maxWorkers)}
	l.wg.Add(2)
	go l.serveUDP()
	go l.serveTCP()
	log.Infof("updates: reading UPDATE messages on %s (UDP and TCP)", addr)
	return l, nil
}

func (l *listener) handler() Handler {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.handlers) == 0 {
		return nil
	}
	return *l.handlers[len(l.handlers)-1]
}

// release removes a handler; the last one closes the sockets.
func (l *listener) release(hp *Handler) {
	listeners.Lock()
	defer listeners.Unlock()
	l.mu.Lock()
	for i, h := range l.handlers {
		if h == hp {
			l.handlers = append(l.handlers[:i], l.handlers[i+1:]...)
			break
		}
	}
	last := len(l.handlers) == 0
	l.mu.Unlock()
	if !last {
		return
	}
	if listeners.m[l.addr] == l {
		delete(listeners.m, l.addr)
	}
	l.udp.Close()
	l.tcp.Close()
	l.mu.Lock()
	for c := range l.open {
		c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
}

func (l *listener) serveUDP() {
	defer l.wg.Done()
	buf := make([]byte, maxWire)
	for {
		n, from, err := l.udp.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		h := l.handler()
		if h == nil {
			continue
		}
		if n > l.inline {
			if reply, _ := answer(h, buf[:n], from); reply != nil {
				l.udp.WriteTo(reply, from) // #nosec G104 -- UDP: best effort
			}
			continue
		}
		select {
		case l.workers <- struct{}{}:
		default:
			continue // every worker busy: dropped, as a loaded server would
		}
		msg := append([]byte(nil), buf[:n]...)
		go func() {
			defer func() { <-l.workers }()
			if reply, _ := answer(h, msg, from); reply != nil {
				l.udp.WriteTo(reply, from) // #nosec G104 -- UDP: best effort
			}
		}()
	}
}

func (l *listener) serveTCP() {
	defer l.wg.Done()
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		c, err := l.tcp.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		tc := l.admit(c)
		if tc == nil {
			c.Close() // over the budget (see above)
			continue
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			l.serveConn(tc)
			tc.Close()
			l.ended(tc)
		}()
	}
}

// serveConn answers the messages of one TCP connection in turn: the first
// within firstTimeout, then, once it proved a key, each within connTimeout,
// at most maxPerConn of them. An unproven connection ends after the reply to
// its first message. A message's buffer is taken once its length has come:
// an idle connection holds none.
func (l *listener) serveConn(c *tcpConn) {
	for i := range maxPerConn {
		timeout := connTimeout
		if i == 0 {
			timeout = firstTimeout
		}
		c.SetDeadline(time.Now().Add(timeout)) // #nosec G104
		var size [2]byte
		if _, err := io.ReadFull(c, size[:]); err != nil {
			return
		}
		msg := make([]byte, binary.BigEndian.Uint16(size[:]))
		if _, err := io.ReadFull(c, msg); err != nil {
			return
		}
		h := l.handler()
		if h == nil {
			return
		}
		reply, proven := answer(h, msg, c.RemoteAddr())
		if proven && i == 0 {
			l.prove(c)
		}
		if reply != nil {
			out := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(reply)), uint16(len(reply))) // #nosec G115 -- a DNS message
			if _, err := c.Write(append(out, reply...)); err != nil {
				return
			}
		}
		if reply == nil || !c.proven {
			return
		}
	}
}

// panics are the log lines of the panics answer recovered from.
var panics = logLimit{every: time.Second, what: "panics"}

// answer returns h's reply to msg. These sockets are the plugin's own, with
// no CoreDNS server around them to recover: a panic of h (a bug, on input
// anyone can send) is logged and answered SERVFAIL, and the process lives on.
func answer(h Handler, msg []byte, from net.Addr) (reply []byte, proven bool) {
	defer func() {
		if p := recover(); p != nil {
			if line := panics.line(time.Now(), "updates: recovered from a panic answering %d octets from %v: %v", len(msg), from, p); line != "" {
				log.Error(line)
			}
			reply, proven = nil, false
			if hd, ok := readHeader(msg); ok && !hd.response {
				reply = plainReply(hd, dns.RcodeServerFailure)
			}
		}
	}()
	return h(context.Background(), msg)
}

// listenBoth opens UDP and TCP on one port of addr. With port 0 the system
// picks the UDP port, which TCP may have in use: a few other picks are tried.
func listenBoth(addr string) (net.PacketConn, net.Listener, error) {
	_, port, _ := net.SplitHostPort(addr)
	for attempt := 0; ; attempt++ {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			return nil, nil, fmt.Errorf("updates: listen %s: %w", addr, err)
		}
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, ln, nil
		}
		pc.Close()
		if port != "0" || attempt == 9 {
			return nil, nil, fmt.Errorf("updates: listen %s: %w", addr, err)
		}
	}
}
