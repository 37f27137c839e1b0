package main

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Objects of the freshness and churn measurements. They carry no part-of
// label, so the populator leaves them alone.
const (
	freshService = "fresh"
	churnObjects = 100
)

// freshness is the delay from a status write to the new answer.
type freshness struct {
	samples     int
	median, max time.Duration // after the API write returned
	medianWrite time.Duration // from before the write was sent
	// The API server's share: when a watch of the bench's own saw the
	// change, after the write returned. The rest is the plugin's.
	watchMedian, watchMax time.Duration
}

// prober measures how fast status changes reach DNS answers.
type prober struct {
	p      *populator
	server *server
	seq    atomic.Uint32 // makes every written address new
}

// setup creates the freshness and churn Services.
func (f *prober) setup(ctx context.Context) error {
	names := []string{freshService}
	for i := range churnObjects {
		names = append(names, fmt.Sprintf("churn%d", i))
	}
	no := false
	var jobs []func(context.Context) error
	for _, name := range names {
		jobs = append(jobs, func(ctx context.Context) error {
			svc := &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: corev1.ServiceSpec{
					Type:                          corev1.ServiceTypeLoadBalancer,
					AllocateLoadBalancerNodePorts: &no,
					Ports:                         []corev1.ServicePort{{Name: "http", Port: 80}},
				},
			}
			_, err := f.p.client.CoreV1().Services(f.p.ns).Create(ctx, svc, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("service %s/%s: %w", f.p.ns, name, err)
			}
			return nil
		})
	}
	return f.p.run(ctx, jobs)
}

func (f *prober) next() netip.Addr {
	n := f.seq.Add(1)
	return netip.AddrFrom4([4]byte{10, 250, byte(n >> 8), byte(n)})
}

// sample changes the fresh Service's address n times and measures each change.
func (f *prober) sample(ctx context.Context, n int) (freshness, error) {
	conn, err := dns.Dial("udp", f.server.addr())
	if err != nil {
		return freshness{}, err
	}
	defer conn.Close()
	name := freshService + "." + f.p.ns + "." + dns.Fqdn(f.p.zone)
	seenByWatch, stop, err := f.watchFresh(ctx)
	if err != nil {
		return freshness{}, err
	}
	defer stop()
	var after, write, watched []time.Duration
	for range n {
		addr := f.next()
		sent := time.Now()
		if err := f.p.setServiceIP(ctx, freshService, addr); err != nil {
			return freshness{}, err
		}
		returned := time.Now()
		seen, err := pollFor(conn, name, addr, returned.Add(5*time.Second))
		if err != nil {
			return freshness{}, err
		}
		after = append(after, max(seen.Sub(returned), 0))
		write = append(write, seen.Sub(sent))
		if at, ok := seenByWatch(addr, returned.Add(5*time.Second)); ok {
			watched = append(watched, max(at.Sub(returned), 0))
		}
		time.Sleep(20 * time.Millisecond) // let the serial timer and NOTIFY settle
	}
	slices.Sort(after)
	slices.Sort(write)
	slices.Sort(watched)
	fr := freshness{samples: n, median: after[n/2], max: after[n-1], medianWrite: write[n/2]}
	if len(watched) > 0 {
		fr.watchMedian, fr.watchMax = watched[len(watched)/2], watched[len(watched)-1]
	}
	return fr, nil
}

// watchFresh watches the fresh Service and returns a function that tells
// when the watch delivered an address.
func (f *prober) watchFresh(ctx context.Context) (seen func(netip.Addr, time.Time) (time.Time, bool), stop func(), err error) {
	w, err := f.p.client.CoreV1().Services(f.p.ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + freshService})
	if err != nil {
		return nil, nil, err
	}
	var mu sync.Mutex
	arrived := map[netip.Addr]time.Time{}
	go func() {
		for ev := range w.ResultChan() {
			now := time.Now()
			if svc, ok := ev.Object.(*corev1.Service); ok {
				for _, in := range svc.Status.LoadBalancer.Ingress {
					if a, err := netip.ParseAddr(in.IP); err == nil {
						mu.Lock()
						if _, dup := arrived[a]; !dup {
							arrived[a] = now
						}
						mu.Unlock()
					}
				}
			}
		}
	}()
	seen = func(a netip.Addr, deadline time.Time) (time.Time, bool) {
		for {
			mu.Lock()
			at, ok := arrived[a]
			mu.Unlock()
			if ok || time.Now().After(deadline) {
				return at, ok
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	return seen, w.Stop, nil
}

// pollFor asks for name's A record until it is addr and returns when it was.
func pollFor(conn *dns.Conn, name string, addr netip.Addr, deadline time.Time) (time.Time, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	for {
		m.Id = dns.Id()
		conn.SetDeadline(time.Now().Add(100 * time.Millisecond))
		if err := conn.WriteMsg(m); err == nil {
			for {
				r, err := conn.ReadMsg()
				if err != nil {
					break // timed out: ask again
				}
				if r.Id != m.Id {
					continue // a late answer to an earlier query
				}
				for _, rr := range r.Answer {
					if a, ok := rr.(*dns.A); ok && a.A.Equal(addr.AsSlice()) {
						return time.Now(), nil
					}
				}
				break
			}
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("%s did not become %s in time", name, addr)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// churn updates churn Services' statuses at rate per second until ctx ends,
// and returns how many updates it made.
func (f *prober) churn(ctx context.Context, rate int) (updates int64, err error) {
	var count atomic.Int64
	var firstErr error
	var once sync.Once
	work := make(chan int, rate)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range work {
				if e := f.p.setServiceIP(context.Background(), fmt.Sprintf("churn%d", i%churnObjects), f.next()); e != nil {
					once.Do(func() { firstErr = e })
					continue
				}
				count.Add(1)
			}
		})
	}
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			close(work)
			wg.Wait()
			return count.Load(), firstErr
		case <-tick.C:
			select {
			case work <- i:
			default: // the API server is behind: drop this tick
			}
		}
	}
}
