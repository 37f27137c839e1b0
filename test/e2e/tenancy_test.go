//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// Two tenant namespaces act against each other: a victim publishes a name, an
// attacker tries to take it with a hostname annotation, to catch every
// missing name with a wildcard, to take the apex and the nameserver name, and
// to take the name over when the victim deletes and recreates its object.

// claimingService creates a LoadBalancer Service in ns that claims hostnames
// by annotation, with the load balancer address ip.
func claimingService(t *testing.T, ns, name, hostnames, ip string) {
	t.Helper()
	kubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata:
  name: %s
  namespace: %s
  annotations: {coredns.io/hostname: %q}
spec: {type: LoadBalancer, ports: [{port: 80}]}
`, name, ns, hostnames), "apply", "-f", "-")
	setLBStatus(t, ns, "service", name, ip)
}

// afterCreationSecond waits until the clock is past the second in which the
// object was created, so that a later object is a later claim (creation
// timestamps have one-second resolution).
func afterCreationSecond(t *testing.T, ns, resource, name string) {
	t.Helper()
	ts := kubectl(t, "", "-n", ns, "get", resource, name, "-o", "jsonpath={.metadata.creationTimestamp}")
	created, err := time.Parse(time.RFC3339, strings.TrimSpace(ts))
	if err != nil {
		t.Fatalf("creationTimestamp %q: %v", ts, err)
	}
	time.Sleep(time.Until(created.Add(time.Second + 10*time.Millisecond)))
}

// rejectedEvents waits for a DNSNameRejected Event on the Service ns/name
// about host, seen with kubectl get events, whose message says why.
func rejectedEvents(t *testing.T, ns, name, host, why string) {
	t.Helper()
	nameEvents(t, "DNSNameRejected", ns, name, host, why)
}

// nameEvents waits for a Warning Event with reason on the Service ns/name
// about host, seen with kubectl get events, whose message contains why.
func nameEvents(t *testing.T, reason, ns, name, host, why string) {
	t.Helper()
	waitServiceEvent(t, ns, name, reason, fmt.Sprintf("for %s (%s)", host, why), func(e serviceEvent) bool {
		return e.typ == "Warning" && strings.HasPrefix(e.message, "DNS name "+host+" ") && strings.Contains(e.message, why)
	})
}

// serviceEvent is what the tests read of an Event.
type serviceEvent struct {
	typ     string
	count   int
	message string
}

// waitServiceEvent waits until an Event with reason on the Service ns/name,
// seen with kubectl get events, satisfies ok; what describes it on failure.
func waitServiceEvent(t *testing.T, ns, name, reason, what string, ok func(serviceEvent) bool) {
	t.Helper()
	waitKindEvent(t, "Service", ns, name, reason, what, ok)
}

// waitKindEvent waits until an Event with reason on the object kind ns/name,
// seen with kubectl get events, satisfies ok; what describes it on failure.
func waitKindEvent(t *testing.T, kind, ns, name, reason, what string, ok func(serviceEvent) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var out string
	for time.Now().Before(deadline) {
		out = kubectl(t, "", "-n", ns, "get", "events", "--field-selector", "reason="+reason+",involvedObject.kind="+kind+",involvedObject.name="+name,
			"-o", "jsonpath={range .items[*]}{.type}{\"\\t\"}{.count}{\"\\t\"}{.message}{\"\\n\"}{end}")
		for _, line := range strings.Split(out, "\n") {
			f := strings.SplitN(line, "\t", 3)
			if len(f) != 3 {
				continue
			}
			count, _ := strconv.Atoi(f[1])
			if ok(serviceEvent{typ: f[0], count: count, message: f[2]}) {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no %s Event on %s/%s %s; events:\n%s", reason, ns, name, what, out)
}

// transferredOnly checks that the zone's AXFR holds addr only at the names in allowed.
func transferredOnly(t *testing.T, s *server, addr string, allowed ...string) {
	t.Helper()
	for _, line := range digLines(t, "@127.0.0.1", "-p", strconv.Itoa(s.port), "example.com.", "AXFR") {
		if f := strings.Fields(line); len(f) == 5 && f[4] == addr && !slices.Contains(allowed, f[0]) {
			t.Errorf("AXFR holds a rejected claim: %s", line)
		}
	}
}

// rejections counts the log lines that reject key's claim on name.
func rejections(s *server, name, key string) int {
	return strings.Count(s.output(), name+": claim of "+key+" rejected")
}

func TestTenancyFirst(t *testing.T) {
	s := startServer(t, "test/e2e/testdata/Corefile.tenancy", kubeconfig, "K8SGW_OWNERSHIP=first")
	// The nameserver's own Service publishes its name, whichever informer reads it.
	nameserverService(t, "192.0.2.53")
	ns1 := "dns1.kube-system.example.com."
	s.eventually(t, 5*time.Second, ns1, dns.TypeA, positive(ns1+" 30 IN A 192.0.2.53"))
	victim, attacker := namespace(t), namespace(t)
	shop := "shop." + victim + ".tenants.example.com."
	claimingService(t, victim, "shop", shop, "192.0.2.10")
	s.eventually(t, 5*time.Second, shop, dns.TypeA, positive(shop+" 30 IN A 192.0.2.10"))
	afterCreationSecond(t, victim, "service", "shop")

	// Hijack by hostname annotation, wildcard land-grab at the apex, the apex
	// and the nameserver name: all rejected; the attacker's own name is served,
	// which shows its claims were processed.
	own := "thief." + attacker + ".example.com."
	claimingService(t, attacker, "thief", shop+", *.example.com, example.com, "+ns1, "192.0.2.66")
	s.eventually(t, 5*time.Second, own, dns.TypeA, positive(own+" 30 IN A 192.0.2.66"))
	check := func() {
		t.Helper()
		s.eventually(t, time.Second, shop, dns.TypeA, positive(shop+" 30 IN A 192.0.2.10"))
		s.eventually(t, time.Second, "missing.example.com.", dns.TypeA, nxdomain)
		s.eventually(t, time.Second, "example.com.", dns.TypeA, nodata)
		s.eventually(t, time.Second, ns1, dns.TypeA, positive(ns1+" 30 IN A 192.0.2.53"))
	}
	check()
	transferredOnly(t, s, "192.0.2.66", own)
	if strings.Contains(s.output(), "claim of Service/kube-system/dns1 rejected") {
		t.Errorf("the nameserver's own Service was rejected:\n%s", s.output())
	}
	if n := rejections(s, shop, "Service/"+attacker+"/thief"); n != 1 {
		t.Errorf("the rejection of %s was logged %d times, want once:\n%s", shop, n, s.output())
	}
	// The attacker is told, on its own object, where it looks.
	rejectedEvents(t, attacker, "thief", "shop."+victim+".tenants.example.com", "another namespace published it first")
	rejectedEvents(t, attacker, "thief", "*.example.com", "belong to the DNS server")
	// kubectl describe lists only the Events whose involvedObject has the
	// object's UID.
	if out := kubectl(t, "", "-n", attacker, "describe", "service", "thief"); !strings.Contains(out, "DNSNameRejected") {
		t.Errorf("kubectl describe shows no DNSNameRejected:\n%s", out)
	}
	if out := kubectl(t, "", "-n", victim, "get", "events", "--field-selector", "reason=DNSNameRejected", "-o", "name"); strings.TrimSpace(out) != "" {
		t.Errorf("the owner got Events: %s", out)
	}
	// Two objects of the victim that disagree merge, and each is told.
	claimingService(t, victim, "shop2", shop, "192.0.2.11")
	s.eventually(t, 5*time.Second, shop, dns.TypeA, positive(shop+" 30 IN A 192.0.2.10", shop+" 30 IN A 192.0.2.11"))
	united := "records united from Service/" + victim + "/shop, Service/" + victim + "/shop2"
	nameEvents(t, "DNSNameConflict", victim, "shop", strings.TrimSuffix(shop, ".")+":", united)
	nameEvents(t, "DNSNameConflict", victim, "shop2", strings.TrimSuffix(shop, ".")+":", united)
	kubectl(t, "", "-n", victim, "delete", "service", "shop2")
	s.eventually(t, 5*time.Second, shop, dns.TypeA, positive(shop+" 30 IN A 192.0.2.10"))

	// Race on create: both tenants claim a name in one apply. The older
	// creation time wins, and in the same second the first Kind/namespace/name.
	race := "race." + victim + ".tenants.example.com."
	kubectl(t, fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: race, namespace: %[1]s, annotations: {coredns.io/hostname: %[3]q}}
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: race, namespace: %[2]s, annotations: {coredns.io/hostname: %[3]q}}
spec: {type: LoadBalancer, ports: [{port: 80}]}
`, victim, attacker, race), "apply", "-f", "-")
	setLBStatus(t, attacker, "service", "race", "192.0.2.66")
	setLBStatus(t, victim, "service", "race", "192.0.2.10")
	created := func(ns string) string {
		return kubectl(t, "", "-n", ns, "get", "service", "race", "-o", "jsonpath={.metadata.creationTimestamp}")
	}
	winner := "192.0.2.10"
	if cv, ca := created(victim), created(attacker); ca < cv || ca == cv && attacker < victim {
		winner = "192.0.2.66"
	}
	s.eventually(t, 5*time.Second, race, dns.TypeA, positive(race+" 30 IN A "+winner))

	// The same owners after a restart, whatever order the informers list in.
	s.stop()
	s.start()
	check()
	s.eventually(t, time.Second, race, dns.TypeA, positive(race+" 30 IN A "+winner))

	// Delete and recreate: under first the attacker's standing claim is next
	// in order and takes over, and the recreated object is a new, later
	// claim. The README says so; delegated is the policy that prevents it.
	kubectl(t, "", "-n", victim, "delete", "service", "shop")
	s.eventually(t, 5*time.Second, shop, dns.TypeA, positive(shop+" 30 IN A 192.0.2.66"))
	claimingService(t, victim, "shop", shop, "192.0.2.10")
	s.eventually(t, 5*time.Second, "shop."+victim+".example.com.", dns.TypeA, positive("shop."+victim+".example.com. 30 IN A 192.0.2.10"))
	s.eventually(t, time.Second, shop, dns.TypeA, positive(shop+" 30 IN A 192.0.2.66"))
	// When the attacker's claim goes, the victim's is next.
	kubectl(t, "", "-n", attacker, "delete", "service", "thief")
	s.eventually(t, 5*time.Second, shop, dns.TypeA, positive(shop+" 30 IN A 192.0.2.10"))
}

func TestTenancyDelegated(t *testing.T) {
	s := startServer(t, "test/e2e/testdata/Corefile.tenancy", kubeconfig, "K8SGW_OWNERSHIP=delegated")
	victim, attacker := namespace(t), namespace(t)
	victimDomain, attackerDomain := victim+".tenants.example.com", attacker+".tenants.example.com"
	annotate := func(ns, domains string) {
		t.Helper()
		if domains == "" {
			kubectl(t, "", "annotate", "namespace", ns, "k8s-gateway.dns/domains-")
			return
		}
		kubectl(t, "", "annotate", "--overwrite", "namespace", ns, "k8s-gateway.dns/domains="+domains)
	}
	annotate(victim, victimDomain)
	annotate(attacker, attackerDomain)

	shop := "shop." + victimDomain + "."
	claimingService(t, victim, "shop", shop, "192.0.2.10")
	s.eventually(t, 5*time.Second, shop, dns.TypeA, positive(shop+" 30 IN A 192.0.2.10"))

	// Created before or after, the attacker gets nothing outside its domain.
	own := "www." + attackerDomain + "."
	claimingService(t, attacker, "thief", strings.Join([]string{own, shop, "*." + victimDomain, "*.tenants.example.com", "*.example.com", "example.com"}, ", "), "192.0.2.66")
	s.eventually(t, 5*time.Second, own, dns.TypeA, positive(own+" 30 IN A 192.0.2.66"))
	check := func() {
		t.Helper()
		s.eventually(t, time.Second, shop, dns.TypeA, positive(shop+" 30 IN A 192.0.2.10"))
		s.eventually(t, time.Second, "other."+victimDomain+".", dns.TypeA, nxdomain)
		s.eventually(t, time.Second, "missing.tenants.example.com.", dns.TypeA, nxdomain)
		s.eventually(t, time.Second, "missing.example.com.", dns.TypeA, nxdomain)
		s.eventually(t, time.Second, "example.com.", dns.TypeA, nodata)
		// An object's automatic name is outside its namespace's domain too.
		s.eventually(t, time.Second, "thief."+attacker+".example.com.", dns.TypeA, nxdomain)
	}
	check()
	transferredOnly(t, s, "192.0.2.66", own)
	rejectedEvents(t, attacker, "thief", "shop."+victimDomain, "outside the domains delegated to this namespace")
	rejectedEvents(t, attacker, "thief", "*.tenants.example.com", "outside the domains delegated to this namespace")
	s.stop()
	s.start()
	check()

	// Delete and recreate: the name is free meanwhile, and the attacker's
	// standing claim still gets nothing.
	kubectl(t, "", "-n", victim, "delete", "service", "shop")
	s.eventually(t, 5*time.Second, shop, dns.TypeA, nxdomain)
	claimingService(t, victim, "shop", shop, "192.0.2.10")
	s.eventually(t, 5*time.Second, shop, dns.TypeA, positive(shop+" 30 IN A 192.0.2.10"))

	// The administrator changes the delegations at run time: without its
	// domain the victim publishes nothing; given to the attacker, the domain
	// is the attacker's, wildcard included.
	annotate(victim, "")
	s.eventually(t, 5*time.Second, shop, dns.TypeA, nxdomain)
	annotate(attacker, attackerDomain+","+victimDomain)
	s.eventually(t, 5*time.Second, shop, dns.TypeA, positive(shop+" 30 IN A 192.0.2.66"))
	s.eventually(t, time.Second, "other."+victimDomain+".", dns.TypeA, positive("other."+victimDomain+". 30 IN A 192.0.2.66"))
	// Back to the victim alone.
	annotate(attacker, attackerDomain)
	annotate(victim, victimDomain)
	s.eventually(t, 5*time.Second, shop, dns.TypeA, positive(shop+" 30 IN A 192.0.2.10"))
	s.eventually(t, time.Second, "other."+victimDomain+".", dns.TypeA, nxdomain)
	s.stop()
	s.start()
	s.eventually(t, time.Second, shop, dns.TypeA, positive(shop+" 30 IN A 192.0.2.10"))
}

// TestTenancyDelegatedListenerSet: under the delegated policy a tenant's
// ListenerSet on a shared Gateway adds listeners only for the tenant's own
// domains. A route of another tenant, in that tenant's domain, attached to it
// gets nothing; attached to its own tenant's ListenerSet it is published.
func TestTenancyDelegatedListenerSet(t *testing.T) {
	installGatewayAPI(t, false)
	s := startServer(t, "test/e2e/testdata/Corefile.tenancy", kubeconfig, "K8SGW_OWNERSHIP=delegated")
	gwNS, tenant, other := namespace(t), namespace(t), namespace(t)
	for _, ns := range []string{tenant, other} {
		kubectl(t, "", "annotate", "--overwrite", "namespace", ns, "k8s-gateway.dns/domains="+ns+".tenants.example.com")
	}
	gatewayClass(t, gwNS)
	kubectlRetry(t, 30*time.Second, manifests(
		gateway{namespace: gwNS, name: "shared", class: gwNS, allowedListeners: "{namespaces: {from: All}}", listeners: []listener{
			{"http", "HTTP", 80, "*.shared.example.com", ""},
		}},
		listenerSet{namespace: tenant, name: "broad", parent: "shared", parentNamespace: gwNS, listeners: []listener{
			{"web", "HTTP", 80, "*.tenants.example.com", "allowedRoutes: {namespaces: {from: All}}"},
		}},
		listenerSet{namespace: other, name: "own", parent: "shared", parentNamespace: gwNS, listeners: []listener{
			{"web", "HTTP", 80, "*.tenants.example.com", ""},
		}},
		route{kind: "HTTPRoute", namespace: other, name: "through-tenant",
			parent:    gwapiParent{gateway: "broad", namespace: tenant, kind: "ListenerSet"},
			hostnames: []string{"a." + other + ".tenants.example.com"}, backend: "app", port: 80},
		route{kind: "HTTPRoute", namespace: other, name: "through-own", parent: gwapiParent{gateway: "own", kind: "ListenerSet"},
			hostnames: []string{"b." + other + ".tenants.example.com"}, backend: "app", port: 80},
	), "apply", "-f", "-")
	setGatewayAddresses(t, gwNS, "shared", "192.0.2.150")
	setListenerSetAccepted(t, tenant, "broad", "True")
	setListenerSetAccepted(t, other, "own", "True")
	setRouteStatus(t, other, "httproutes", "through-tenant", gwapiParent{gateway: "broad", namespace: tenant, kind: "ListenerSet", accepted: "True"})
	setRouteStatus(t, other, "httproutes", "through-own", gwapiParent{gateway: "own", kind: "ListenerSet", accepted: "True"})

	own, through := "b."+other+".tenants.example.com.", "a."+other+".tenants.example.com."
	s.eventually(t, 10*time.Second, own, dns.TypeA, gwapiA(own, "192.0.2.150"))
	s.eventually(t, time.Second, through, dns.TypeA, nxdomain)
	waitLog(t, s, 5*time.Second, through+": not published through ListenerSet "+tenant+"/broad: outside the domains delegated to namespace "+tenant)
	// The route hears of it as of any refused claim.
	waitKindEvent(t, "HTTPRoute", other, "through-tenant", "DNSNameRejected", "for "+through, func(e serviceEvent) bool {
		return e.typ == "Warning" && strings.HasPrefix(e.message, "DNS name "+strings.TrimSuffix(through, ".")+" ")
	})

	// The administrator delegates the other tenant's domain to the
	// ListenerSet's namespace too: the route publishes through it.
	kubectl(t, "", "annotate", "--overwrite", "namespace", tenant,
		"k8s-gateway.dns/domains="+tenant+".tenants.example.com,"+other+".tenants.example.com")
	s.eventually(t, 5*time.Second, through, dns.TypeA, gwapiA(through, "192.0.2.150"))
	transferredOnly(t, s, "192.0.2.150", own, through)
}
