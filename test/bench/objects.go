package main

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Layout of the published names. Up to maxServices names, half come from
// LoadBalancer Services and half from single-host Ingresses. Beyond that
// kube-apiserver's ClusterIP allocator makes Service creation crawl, so the
// rest come from Ingresses with hostsPerIngress rules each. Growing N keeps
// every object of a smaller N, so a bigger run creates only the difference.
// With single (-single-ingresses), every name is a single-host Ingress of
// its own: the informer cache's cost per object.
const (
	maxServices     = 5000
	maxSingle       = 5000
	hostsPerIngress = 100
	partOfLabel     = "app.kubernetes.io/part-of"
	partOfValue     = "k8sgw-bench"
)

// layout is how many objects of each shape a size needs.
type layout struct {
	services, single, multi int // multi: Ingresses with hostsPerIngress hosts
	multiHosts              int // hosts of the last multi Ingress (≤ hostsPerIngress)
}

func layoutFor(n int, single bool) layout {
	var l layout
	if single {
		l.single = n
		return l
	}
	l.services = min(n/2, maxServices)
	rest := n - l.services
	l.single = min(rest, maxSingle)
	rest -= l.single
	if rest > 0 {
		l.multi = (rest + hostsPerIngress - 1) / hostsPerIngress
		l.multiHosts = rest - (l.multi-1)*hostsPerIngress
	}
	return l
}

// record is one published name and its address.
type record struct {
	name string // fully qualified
	addr netip.Addr
}

// address returns a distinct IPv4 address for object number i of a shape.
func address(shape byte, i int) netip.Addr {
	return netip.AddrFrom4([4]byte{10, shape + byte(i>>16), byte(i >> 8), byte(i)})
}

func serviceName(i int) string { return fmt.Sprintf("s%d", i) }
func singleName(i int) string  { return fmt.Sprintf("i%d", i) }
func multiName(i int) string   { return fmt.Sprintf("m%d", i) }

// objects returns the number of objects of l.
func (l layout) objects() int { return l.services + l.single + l.multi }

// records returns every name a size publishes, with its address, in zone for
// objects in namespace ns.
func records(n int, zone, ns string, single bool) []record {
	l := layoutFor(n, single)
	out := make([]record, 0, n)
	for i := range l.services {
		out = append(out, record{serviceName(i) + "." + ns + "." + zone, address(1, i)})
	}
	for i := range l.single {
		out = append(out, record{singleName(i) + "." + zone, address(2, i)})
	}
	for i := range l.multi {
		for h := range hostsIn(l, i) {
			out = append(out, record{fmt.Sprintf("m%d-%d.%s", i, h, zone), address(4, i)})
		}
	}
	return out
}

// hostsIn returns the number of hosts of multi Ingress i.
func hostsIn(l layout, i int) int {
	if i == l.multi-1 {
		return l.multiHosts
	}
	return hostsPerIngress
}

// populator creates the benchmark's objects in a namespace, with statuses,
// using parallel workers.
type populator struct {
	client  kubernetes.Interface
	ns      string
	zone    string // without the trailing dot, for Ingress hosts
	workers int
	single  bool // every name a single-host Ingress (see layoutFor)
}

// ensure makes the namespace hold the objects of size n (creating only the
// missing ones, setting statuses not yet set and deleting objects of a bigger
// size) and returns how many objects it wrote.
func (p *populator) ensure(ctx context.Context, n int) (int, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.ns}}
	if _, err := p.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return 0, err
	}
	sel := metav1.ListOptions{LabelSelector: partOfLabel + "=" + partOfValue}
	svcs, err := p.client.CoreV1().Services(p.ns).List(ctx, sel)
	if err != nil {
		return 0, err
	}
	ings, err := p.client.NetworkingV1().Ingresses(p.ns).List(ctx, sel)
	if err != nil {
		return 0, err
	}
	ready := map[string]bool{} // "kind/name" → exists with its status
	for _, s := range svcs.Items {
		ready["svc/"+s.Name] = len(s.Status.LoadBalancer.Ingress) > 0
	}
	for _, i := range ings.Items {
		ready["ing/"+i.Name] = len(i.Status.LoadBalancer.Ingress) > 0
	}

	l := layoutFor(n, p.single)
	var jobs []func(context.Context) error
	want := map[string]bool{}
	for i := range l.services {
		want["svc/"+serviceName(i)] = true
		if ok, exists := ready["svc/"+serviceName(i)]; !ok {
			jobs = append(jobs, p.serviceJob(i, exists))
		}
	}
	for i := range l.single {
		want["ing/"+singleName(i)] = true
		if ok, exists := ready["ing/"+singleName(i)]; !ok {
			jobs = append(jobs, p.ingressJob(singleName(i), []string{singleName(i)}, address(2, i), exists))
		}
	}
	for i := range l.multi {
		want["ing/"+multiName(i)] = true
		if ok, exists := ready["ing/"+multiName(i)]; !ok {
			hosts := make([]string, hostsIn(l, i))
			for h := range hosts {
				hosts[h] = fmt.Sprintf("m%d-%d", i, h)
			}
			jobs = append(jobs, p.ingressJob(multiName(i), hosts, address(4, i), exists))
		}
	}
	// Objects of a bigger size from an earlier run.
	for key := range ready {
		if !want[key] {
			jobs = append(jobs, p.deleteJob(key))
		}
	}
	return len(jobs), p.run(ctx, jobs)
}

// deleteJob deletes the object "svc/NAME" or "ing/NAME".
func (p *populator) deleteJob(key string) func(context.Context) error {
	kind, name, _ := strings.Cut(key, "/")
	return func(ctx context.Context) error {
		var err error
		if kind == "svc" {
			err = p.client.CoreV1().Services(p.ns).Delete(ctx, name, metav1.DeleteOptions{})
		} else {
			err = p.client.NetworkingV1().Ingresses(p.ns).Delete(ctx, name, metav1.DeleteOptions{})
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s %s/%s: %w", kind, p.ns, name, err)
		}
		return nil
	}
}

// run runs jobs on p.workers goroutines and returns the first error.
func (p *populator) run(ctx context.Context, jobs []func(context.Context) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range max(p.workers, 1) {
		wg.Go(func() {
			for {
				j := int(next.Add(1)) - 1
				if j >= len(jobs) || ctx.Err() != nil {
					return
				}
				if err := jobs[j](ctx); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

func labels() map[string]string { return map[string]string{partOfLabel: partOfValue} }

func (p *populator) serviceJob(i int, exists bool) func(context.Context) error {
	name := serviceName(i)
	return func(ctx context.Context) error {
		if !exists {
			no := false
			svc := &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels()},
				Spec: corev1.ServiceSpec{
					Type:                          corev1.ServiceTypeLoadBalancer,
					AllocateLoadBalancerNodePorts: &no, // 5,000 would exhaust the NodePort range
					Ports:                         []corev1.ServicePort{{Name: "http", Port: 80}},
				},
			}
			if _, err := p.client.CoreV1().Services(p.ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("service %s/%s: %w", p.ns, name, err)
			}
		}
		return p.setServiceIP(ctx, name, address(1, i))
	}
}

func (p *populator) ingressJob(name string, hosts []string, addr netip.Addr, exists bool) func(context.Context) error {
	return func(ctx context.Context) error {
		if !exists {
			ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels()}}
			for _, h := range hosts {
				ing.Spec.Rules = append(ing.Spec.Rules, networkingv1.IngressRule{Host: h + "." + p.zone})
			}
			if _, err := p.client.NetworkingV1().Ingresses(p.ns).Create(ctx, ing, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("ingress %s/%s: %w", p.ns, name, err)
			}
		}
		return p.setIngressIP(ctx, name, addr)
	}
}

func statusPatch(addr netip.Addr) []byte {
	return fmt.Appendf(nil, `{"status":{"loadBalancer":{"ingress":[{"ip":%q}]}}}`, addr)
}

// setServiceIP sets the load balancer address of a Service; it returns when
// the API server has stored it.
func (p *populator) setServiceIP(ctx context.Context, name string, addr netip.Addr) error {
	_, err := p.client.CoreV1().Services(p.ns).Patch(ctx, name, types.MergePatchType, statusPatch(addr), metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("status of service %s/%s: %w", p.ns, name, err)
	}
	return nil
}

func (p *populator) setIngressIP(ctx context.Context, name string, addr netip.Addr) error {
	_, err := p.client.NetworkingV1().Ingresses(p.ns).Patch(ctx, name, types.MergePatchType, statusPatch(addr), metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("status of ingress %s/%s: %w", p.ns, name, err)
	}
	return nil
}

// timed runs f and returns how long it took.
func timed(f func() error) (time.Duration, error) {
	start := time.Now()
	err := f()
	return time.Since(start), err
}
