package gateway

// Helpers shared by the source, setup and pipeline tests (kubernetes_test.go,
// ingress_test.go, service_test.go, setup_test.go, controller_test.go,
// fuzz_sources_test.go). Names carry a k8s prefix so that they do not collide
// with the helpers of the index and lookup tests in the same package.

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// k8sStrings returns the presentation form of rrs, sorted.
func k8sStrings(rrs []dns.RR) []string {
	out := make([]string, 0, len(rrs))
	for _, rr := range rrs {
		out = append(out, rr.String())
	}
	slices.Sort(out)
	return out
}

// k8sWant parses records in zone-file form ("www.example.com. 60 IN A 192.0.2.1")
// and returns their presentation form, sorted, for comparison with k8sStrings.
func k8sWant(t testing.TB, lines ...string) []string {
	t.Helper()
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		rr, err := dns.NewRR(l)
		if err != nil || rr == nil {
			t.Fatalf("bad expected record %q: %v", l, err)
		}
		out = append(out, rr.String())
	}
	slices.Sort(out)
	return out
}

// k8sDiff describes how got differs from want, or returns "".
func k8sDiff(got, want []string) string {
	if slices.Equal(got, want) {
		return ""
	}
	return fmt.Sprintf("got:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
}

// k8sCheckWarnings checks that every substring in want occurs in some warning,
// and that there are no warnings when want is empty.
func k8sCheckWarnings(t *testing.T, got, want []string) {
	t.Helper()
	if len(want) == 0 && len(got) > 0 {
		t.Errorf("unexpected warnings: %q", got)
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, w) }) {
			t.Errorf("no warning contains %q; warnings: %q", w, got)
		}
	}
}

// k8sLB turns addresses into Ingress load balancer entries: an IP goes in
// the ip field, anything else in the hostname field.
func k8sIngressLB(addrs ...string) networkingv1.IngressStatus {
	var st networkingv1.IngressStatus
	for _, a := range addrs {
		if _, err := netip.ParseAddr(a); err == nil {
			st.LoadBalancer.Ingress = append(st.LoadBalancer.Ingress, networkingv1.IngressLoadBalancerIngress{IP: a})
		} else {
			st.LoadBalancer.Ingress = append(st.LoadBalancer.Ingress, networkingv1.IngressLoadBalancerIngress{Hostname: a})
		}
	}
	return st
}

// k8sServiceLB is k8sIngressLB for Services.
func k8sServiceLB(addrs ...string) corev1.ServiceStatus {
	var st corev1.ServiceStatus
	for _, a := range addrs {
		if _, err := netip.ParseAddr(a); err == nil {
			st.LoadBalancer.Ingress = append(st.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: a})
		} else {
			st.LoadBalancer.Ingress = append(st.LoadBalancer.Ingress, corev1.LoadBalancerIngress{Hostname: a})
		}
	}
	return st
}

// k8sAsk sends one query to g and returns the reply (nil when the plugin
// wrote none) and the rcode ServeDNS returned.
func k8sAsk(g *Gateway, name string, qtype uint16) (*dns.Msg, int, error) {
	req := new(dns.Msg)
	req.SetQuestion(dns.Fqdn(name), qtype)
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	rcode, err := g.ServeDNS(context.Background(), rec, req)
	return rec.Msg, rcode, err
}

// k8sAnswer returns a one-line description of the reply to name/qtype: its
// rcode and answer and additional sections, for comparing with k8sExpect.
func k8sAnswer(g *Gateway, name string, qtype uint16) string {
	m, rcode, err := k8sAsk(g, name, qtype)
	if err != nil {
		return fmt.Sprintf("error %v (rcode %s)", err, dns.RcodeToString[rcode])
	}
	if m == nil {
		return "no reply, rcode " + dns.RcodeToString[rcode]
	}
	return k8sFormat(dns.RcodeToString[m.Rcode], k8sStrings(m.Answer), k8sStrings(m.Extra))
}

// k8sExpect builds what k8sAnswer returns for rcode, answer and additional records.
func k8sExpect(t testing.TB, rcode string, answer []string, extra ...string) string {
	t.Helper()
	return k8sFormat(rcode, k8sWant(t, answer...), k8sWant(t, extra...))
}

func k8sFormat(rcode string, answer, extra []string) string {
	return fmt.Sprintf("%s answer=[%s] extra=[%s]", rcode, strings.Join(answer, " | "), strings.Join(extra, " | "))
}

// k8sEventually polls f until it returns "" or the deadline passes, then fails
// with f's last message.
func k8sEventually(t testing.TB, what string, f func() string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		msg := f()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still wrong after 5s: %s", what, msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// k8sAnswers polls until g answers name/qtype as want.
func k8sAnswers(t testing.TB, g *Gateway, name string, qtype uint16, want string) {
	t.Helper()
	k8sEventually(t, name+" "+dns.TypeToString[qtype], func() string {
		if got := k8sAnswer(g, name, qtype); got != want {
			return "got " + got + ", want " + want
		}
		return ""
	})
}
