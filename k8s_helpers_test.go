package gateway

// Helpers shared by the source, setup and pipeline tests (kubernetes_test.go,
// ingress_test.go, service_test.go, setup_test.go, controller_test.go,
// fuzz_sources_test.go). Names carry a k8s prefix so that they do not collide
// with the helpers of the index and lookup tests in the same package.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

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
	return k8sFormat(dns.RcodeToString[m.Rcode], testutil.Strings(m.Answer), testutil.Strings(m.Extra))
}

// k8sExpect builds what k8sAnswer returns for rcode, answer and additional records.
func k8sExpect(t testing.TB, rcode string, answer []string, extra ...string) string {
	t.Helper()
	return k8sFormat(rcode, testutil.Want(t, answer...), testutil.Want(t, extra...))
}

func k8sFormat(rcode string, answer, extra []string) string {
	return fmt.Sprintf("%s answer=[%s] extra=[%s]", rcode, strings.Join(answer, " | "), strings.Join(extra, " | "))
}

// k8sAnswers polls until g answers name/qtype as want.
func k8sAnswers(t testing.TB, g *Gateway, name string, qtype uint16, want string) {
	t.Helper()
	testutil.Eventually(t, name+" "+dns.TypeToString[qtype], func() string {
		if got := k8sAnswer(g, name, qtype); got != want {
			return "got " + got + ", want " + want
		}
		return ""
	})
}
