package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"

	"github.com/seed-e581d630/k8s_gateway/acmeupdate"
	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

func TestParseUpdates(t *testing.T) {
	key := filepath.Join(t.TempDir(), "a.key")
	if err := os.WriteFile(key, []byte("c2VjcmV0LW9mLXRlYW0tYS0zMi1ieXRlcy1sb25nISE=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		block, err string
	}{
		{"updates {\n listen :5353\n key team-a. hmac-sha256 " + key + " team-a\n secrets\n expire 2h\n }", ""},
		{"updates {\n listen 127.0.0.1:5353\n secrets team-a\n}", ""},
		{"updates {\n secrets team-a\n}", "no listen address"},
		{"updates {\n listen 5353\n secrets team-a\n}", "HOST:PORT"},
		{"updates {\n}", "no key"},
		{"updates", "want updates {"},
		{"updates {\n key team-a. hmac-md5 " + key + " team-a\n}", "unsupported TSIG algorithm"},
		{"updates {\n listen :5353\n secrets\n}\nupdates {\n listen :5353\n secrets\n}", "given twice"},
		{"updates {\n secrets\n rate\n}", "rate"},
	}
	for _, tc := range cases {
		c := caddy.NewTestController("dns", "k8s_gateway example.com {\n"+tc.block+"\n}")
		g, err := parse(c)
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: error %v, want %q", tc.block, err, tc.err)
			continue
		}
		if err == nil && g.updates.opts == nil {
			t.Errorf("%q: no options", tc.block)
		}
	}
}

// updRecorder keeps what the plugin wrote, as a message or as bytes.
type updRecorder struct {
	test.ResponseWriter
	msg *dns.Msg
}

func (r *updRecorder) WriteMsg(m *dns.Msg) error { r.msg = m; return nil }
func (r *updRecorder) Write(b []byte) (int, error) {
	r.msg = new(dns.Msg)
	return len(b), r.msg.Unpack(b)
}

func updServe(t *testing.T, g *Gateway, m *dns.Msg) (int, *dns.Msg) {
	t.Helper()
	w := &updRecorder{}
	code, err := g.ServeDNS(context.Background(), w, m)
	if err != nil {
		t.Fatal(err)
	}
	return code, w.msg
}

// TestServeUpdate: without the option an UPDATE is NOTIMP; with it, an
// accepted update is a DNSEndpoint, answered at once from the overlay, and
// from the index once the informer brings it back.
func TestServeUpdate(t *testing.T) {
	const secret = "c2VjcmV0LW9mLXRlYW0tYS0zMi1ieXRlcy1sb25nISE="
	const name = "_acme-challenge.team-a.example.org."
	update := func() *dns.Msg {
		m := new(dns.Msg)
		m.SetUpdate("example.org.")
		rr, _ := dns.NewRR(name + " 60 IN TXT \"token\"")
		m.Insert([]dns.RR{rr})
		m.SetTsig("team-a.", dns.HmacSHA256, 300, time.Now().Unix())
		wire, _, err := dns.TsigGenerate(m, secret, "", false)
		if err != nil {
			t.Fatal(err)
		}
		r := new(dns.Msg)
		if err := r.Unpack(wire); err != nil {
			t.Fatal(err)
		}
		return r
	}
	off, _ := qtGateway(t, []string{"example.org."}, nil, nil)
	if code, msg := updServe(t, off, update()); code != dns.RcodeNotImplemented || msg != nil {
		t.Fatalf("without updates: code %d, wrote %v", code, msg)
	}

	g, _ := qtGateway(t, []string{"example.org."}, func(g *Gateway) {
		g.updates.opts = acmeupdate.NewOptions()
		k, err := acmeupdate.NewKey("team-a.", "hmac-sha256", secret, "team-a", "Corefile")
		if err != nil {
			t.Fatal(err)
		}
		g.updates.opts.Keys = []acmeupdate.Key{k}
		g.updates.opts.Listen = "127.0.0.1:0"
	}, nil)
	g.updates.service = newUpdateService(g)
	gvr := schema.GroupVersionResource{Group: "externaldns.k8s.io", Version: "v1alpha1", Resource: "dnsendpoints"}
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "DNSEndpointList"})
	g.updates.service.StartClient(dyn)
	if err := g.updates.service.Listen(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.updates.service.Stop)
	// Through CoreDNS: NOTIMP, the MAC covers bytes only the listener has.
	if code, _ := updServe(t, g, update()); code != dns.RcodeNotImplemented {
		t.Fatalf("update through CoreDNS: code %d", code)
	}
	for _, netw := range []string{"udp", "tcp"} {
		c := &dns.Client{Net: netw, TsigSecret: map[string]string{"team-a.": secret}}
		msg, _, err := c.Exchange(update(), g.updates.service.Addr())
		if err != nil || msg.Rcode != dns.RcodeSuccess || msg.IsTsig() == nil {
			t.Fatalf("update over %s: %v %v", netw, msg, err)
		}
	}
	list, err := dyn.Resource(gvr).Namespace("team-a").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("DNSEndpoints of team-a: %v %v", list, err)
	}
	query := new(dns.Msg)
	query.SetQuestion(name, dns.TypeTXT)
	for _, step := range []string{"from the overlay", "from the index"} {
		_, msg := updServe(t, g, query)
		if msg == nil || msg.Rcode != dns.RcodeSuccess || len(msg.Answer) != 1 || msg.Answer[0].(*dns.TXT).Txt[0] != "token" {
			t.Fatalf("TXT %s: %v", step, msg)
		}
		// The informer brings the object back.
		g.index.UpdateClaim("DNSEndpoint/team-a/x", index.Claim{Namespace: "team-a"}, testutil.RRs(name+" 60 IN TXT \"token\""))
		g.index.Flush()
	}
}

// TestUpdatesNeedDNSEndpoints: the challenges come back through the
// DNSEndpoint informer; without that kind the setup fails.
func TestUpdatesNeedDNSEndpoints(t *testing.T) {
	c := caddy.NewTestController("dns", "k8s_gateway example.com {\n resources Service\n updates {\n  listen :5353\n  secrets\n }\n}")
	if err := setup(c); err == nil || !strings.Contains(err.Error(), "add DNSEndpoint to resources") {
		t.Fatalf("setup without DNSEndpoint: %v", err)
	}
}
