package acmeupdate

import (
	"net"
	"net/netip"
)

// The TCP budget spends little on clients that have not proven a key. A new
// connection is unproven until its first message proves one (see Handler);
// one whose first message does not is answered and closed, and it had
// firstTimeout to send it. Unproven connections count apart from proven
// ones, per address and in all: at most maxUnproven of the maxConns, so the
// rest is kept for proven ones, and at most maxUnprovIP of one address. When
// the unproven share is full, a new connection takes the place of the oldest
// unproven connection of the address holding the most of them, if that is
// more than its own address holds: a client behind an address of its own
// gets in at once, however many connections a few addresses open.

// tcpConn is one TCP connection and its place in the budget.
type tcpConn struct {
	net.Conn
	ip      netip.Addr
	arrival uint64 // the order it came in: the oldest unproven one goes first
	proven  bool   // its first message proved a key
	counted bool   // it holds its slots (false once given back)
}

// addrConns are the TCP connections of one address.
type addrConns struct{ unproven, proven int }

// admit counts a new connection in the budget, making room by closing the
// oldest unproven connection of the address holding the most of them when
// the unproven share is full; nil when there is no room for it.
func (l *listener) admit(c net.Conn) *tcpConn {
	ip := remoteIP(c)
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.perIP[ip]
	if a == nil {
		a = &addrConns{}
	}
	if a.unproven >= maxUnprovIP || a.unproven+a.proven >= maxConnsIP {
		return nil
	}
	if l.unproven >= maxUnproven || len(l.open) >= maxConns {
		victim := l.victim()
		if victim == nil || l.perIP[victim.ip].unproven <= a.unproven {
			return nil
		}
		victim.Close() // its goroutine ends; its slots are given back now
		l.giveBack(victim)
	}
	l.arrivals++
	tc := &tcpConn{Conn: c, ip: ip, arrival: l.arrivals, counted: true}
	a.unproven++
	l.perIP[ip] = a
	l.unproven++
	l.open[tc] = struct{}{}
	return tc
}

// victim returns the oldest unproven connection of the address holding the
// most unproven connections, nil when there is none. l.mu is held.
func (l *listener) victim() *tcpConn {
	var v *tcpConn
	for c := range l.open {
		if c.proven || !c.counted {
			continue
		}
		if v == nil {
			v = c
			continue
		}
		cn, vn := l.perIP[c.ip].unproven, l.perIP[v.ip].unproven
		if cn > vn || cn == vn && c.arrival < v.arrival {
			v = c
		}
	}
	return v
}

// prove moves a connection from the unproven share to the proven one.
func (l *listener) prove(tc *tcpConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if tc.proven || !tc.counted {
		return
	}
	tc.proven = true
	a := l.perIP[tc.ip]
	a.unproven--
	a.proven++
	l.unproven--
}

// ended gives back the slots of a connection that ended.
func (l *listener) ended(tc *tcpConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.giveBack(tc)
}

// giveBack gives back tc's slots, once. l.mu is held.
func (l *listener) giveBack(tc *tcpConn) {
	if !tc.counted {
		return
	}
	tc.counted = false
	delete(l.open, tc)
	a := l.perIP[tc.ip]
	if tc.proven {
		a.proven--
	} else {
		a.unproven--
		l.unproven--
	}
	if a.proven+a.unproven <= 0 {
		delete(l.perIP, tc.ip)
	}
}

// remoteIP returns the address a connection comes from.
func remoteIP(c net.Conn) netip.Addr {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}
