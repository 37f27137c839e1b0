package gateway

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/internal/testutil"
)

// Helpers shared by gateway_test.go, transfer_test.go, bench_test.go
// and fuzz_serve_test.go. Everything here is prefixed "qt" to stay out of the
// way of helpers in other test files of the package.

// qtGateway returns a ready Gateway for zones holding objects (object key →
// records), configured by configure (may be nil) before init. Its index runs on
// a fake clock one second after the initial serial, so the first Flush sets the
// serial to initial+1 without arming the serial timer.
func qtGateway(t testing.TB, zones []string, configure func(*Gateway), objects map[string][]string) (*Gateway, *testutil.Clock) {
	t.Helper()
	g := newGateway()
	g.Zones = zones
	if configure != nil {
		configure(g)
	}
	clk := &testutil.Clock{}
	clk.Set(time.Now().Truncate(time.Second))
	g.now = clk.Now
	g.buildIndex()
	clk.Add(time.Second)
	t.Cleanup(g.index.Close)
	keys := make([]string, 0, len(objects))
	for k := range objects {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		g.index.Update(k, testutil.RRs(objects[k]...))
	}
	g.index.Flush()
	g.ready.Store(true)
	return g, clk
}

// qtSOA is the SOA record that the plugin serves for zone with the default
// settings. Serial 0 stands for "the zone's current serial" in qtCheck.
func qtSOA(zone string) string {
	return fmt.Sprintf("%s 60 IN SOA dns1.kube-system.%s hostmaster.%s 0 300 60 604800 60", zone, zone, zone)
}

// qtServe sends m to g and returns the code ServeDNS returned and the message it wrote, if any.
func qtServe(t testing.TB, g *Gateway, m *dns.Msg) (int, *dns.Msg) {
	t.Helper()
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	code, err := g.ServeDNS(context.Background(), rec, m)
	if err != nil {
		t.Fatalf("%s %s: ServeDNS error: %v", m.Question[0].Name, dns.TypeToString[m.Question[0].Qtype], err)
	}
	return code, rec.Msg
}

// qtCheck asks g the question of tc and checks that a response was written
// with ServeDNS returning success, the rcode of tc, AA set, the question
// echoed, and answer, authority and additional sections equal to those of tc:
// same records with the same owners, types, TTLs and data, in any order. An
// expected SOA with serial 0 matches the zone's serial in the current snapshot.
func qtCheck(t *testing.T, g *Gateway, tc test.Case) {
	t.Helper()
	qtCheckAA(t, g, tc, true)
}

// qtCheckAA is qtCheck for a response whose AA flag must be aa (false for referrals).
func qtCheckAA(t *testing.T, g *Gateway, tc test.Case, aa bool) {
	t.Helper()
	m := tc.Msg()
	name := tc.Qname + "/" + dns.TypeToString[tc.Qtype]
	code, resp := qtServe(t, g, m)
	if resp == nil {
		t.Errorf("%s: nothing written, ServeDNS returned %s", name, dns.RcodeToString[code])
		return
	}
	if code != dns.RcodeSuccess {
		t.Errorf("%s: ServeDNS returned %s after writing a response", name, dns.RcodeToString[code])
	}
	if resp.Authoritative != aa {
		t.Errorf("%s: AA is %v, want %v", name, resp.Authoritative, aa)
	}
	if len(resp.Question) != 1 || resp.Question[0] != m.Question[0] {
		t.Errorf("%s: question is %v, want %v", name, resp.Question, m.Question)
	}
	if _, err := resp.Pack(); err != nil {
		t.Errorf("%s: response does not pack: %v", name, err)
	}
	if err := test.CNAMEOrder(resp); err != nil {
		t.Errorf("%s: %v\n%s", name, err, resp)
	}
	tc = qtFillSerials(g, tc)
	if err := test.SortAndCheck(resp, tc); err != nil {
		t.Errorf("%s: %v\n%s", name, err, resp)
		return
	}
	for _, sec := range []struct {
		name      string
		got, want []dns.RR
	}{{"answer", resp.Answer, tc.Answer}, {"authority", resp.Ns, tc.Ns}, {"additional", resp.Extra, tc.Extra}} {
		if got, want := qtStrings(sec.got), qtStrings(sec.want); !slices.Equal(got, want) {
			t.Errorf("%s: %s section\n got %q\nwant %q", name, sec.name, got, want)
		}
	}
}

// qtFillSerials returns tc with its sections sorted as test.SortAndCheck sorts
// a response, and every SOA of serial 0 set to its zone's current serial.
func qtFillSerials(g *Gateway, tc test.Case) test.Case {
	s := g.index.Snapshot()
	fill := func(rrs []dns.RR) []dns.RR {
		out := slices.Clone(rrs)
		for i, rr := range out {
			if soa, ok := rr.(*dns.SOA); ok && soa.Serial == 0 {
				c := dns.Copy(soa).(*dns.SOA)
				if zi := slices.Index(g.Zones, strings.ToLower(soa.Hdr.Name)); zi >= 0 {
					c.Serial = s.Serial(zi)
				}
				out[i] = c
			}
		}
		sort.Sort(test.RRSet(out))
		return out
	}
	tc.Answer, tc.Ns, tc.Extra = fill(tc.Answer), fill(tc.Ns), fill(tc.Extra)
	return tc
}

// qtStrings returns the presentation forms of rrs, sorted.
func qtStrings(rrs []dns.RR) []string {
	out := make([]string, len(rrs))
	for i, rr := range rrs {
		out[i] = rr.String()
	}
	slices.Sort(out)
	return out
}

// parseCase parses c. With wantErr, parse must fail with an error that
// contains every string of wantErr, and parseCase returns nil; otherwise it
// must succeed.
func parseCase(t *testing.T, c *caddy.Controller, wantErr []string) *Gateway {
	t.Helper()
	g, err := parse(c)
	if wantErr != nil {
		if err == nil {
			t.Fatalf("parse succeeded, want an error containing %q", wantErr)
		}
		for _, s := range wantErr {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q does not contain %q", err, s)
			}
		}
		return nil
	}
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return g
}
