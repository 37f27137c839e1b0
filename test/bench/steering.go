package main

import (
	"context"
	"fmt"
	"log"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The steering run (-steering MMDB): the server CPU per query of a plain
// name and of steered ones (weights; locations), side by side on one
// k8s_gateway whose server block has the metadata and geoip plugins, and a
// plain name on one without them. Each name has two Services. See the
// "Traffic steering" section of docs/operations/benchmarks.md.

// steerCase is one dnsperf run of the steering comparison.
type steerCase struct {
	desc, name string
	ecs        bool // queries carry an ECS option (198.51.100.0/24)
	geoip      bool // against the server with metadata and geoip
}

var steerCases = []steerCase{
	{"plain name, no geoip in the block", "plain", false, false},
	{"plain name", "plain", false, true},
	{"weighted name", "weighted", false, true},
	{"plain name, ECS", "plain", true, true},
	{"geo name, ECS", "geo", true, true},
	{"geo and weighted name, ECS", "geoweighted", true, true},
}

// ecsOption is dnsperf's -E value of an ECS option for 198.51.100.0/24:
// code 8, family 1, source prefix 24, scope 0, address 198.51.100.
const ecsOption = "8:00011800c63364"

func runSteering(ctx context.Context, o options, pop *populator, srv *servers, cp *controlPlane) error {
	ns := pop.ns
	if _, err := pop.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	zone := strings.TrimSuffix(o.zone, ".")
	for i, s := range []struct{ svc, host, weight, loc string }{
		{"plain-a", "plain", "", ""},
		{"plain-b", "plain", "", ""},
		{"weighted-a", "weighted", "3", ""},
		{"weighted-b", "weighted", "1", ""},
		{"geo-a", "geo", "", "continent=EU,country=DE"},
		{"geo-b", "geo", "", "continent=NA,country=US"},
		{"geoweighted-a", "geoweighted", "3", "continent=EU,country=DE"},
		{"geoweighted-b", "geoweighted", "1", "continent=EU,country=FR"},
	} {
		annotations := map[string]string{"coredns.io/hostname": s.host + "." + zone}
		if s.weight != "" {
			annotations["k8s-gateway.dns/weight"] = s.weight
		}
		if s.loc != "" {
			annotations["k8s-gateway.dns/location"] = s.loc
		}
		no := false
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: s.svc, Labels: labels(), Annotations: annotations},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, AllocateLoadBalancerNodePorts: &no,
				Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
		}
		if _, err := pop.client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		if err := pop.setServiceIP(ctx, s.svc, netip.AddrFrom4([4]byte{192, 0, 2, byte(10 + i)})); err != nil {
			return err
		}
	}
	plain, err := srv.gateway(ns)
	if err != nil {
		return err
	}
	defer plain.stop()
	geo, err := srv.steeringGateway(ns, o.steering)
	if err != nil {
		return err
	}
	defer geo.stop()
	for _, s := range []*server{plain, geo} {
		if _, err := s.waitAnswer("geoweighted."+o.zone, dns.TypeA, 2*time.Minute); err != nil {
			return err
		}
	}
	time.Sleep(2 * time.Second) // every Service in
	queries := map[string]string{}
	for _, c := range steerCases {
		path := filepath.Join(o.work, "queries-"+c.name)
		if err := os.WriteFile(path, []byte(strings.Repeat(c.name+"."+o.zone+" A\n", 1000)), 0o644); err != nil {
			return err
		}
		queries[c.name] = path
	}
	cpu := make([][]time.Duration, len(steerCases))
	qps := make([][]float64, len(steerCases))
	for round := range o.rounds {
		for i, c := range steerCases {
			ld := o.load
			ld.queries = queries[c.name]
			if c.ecs {
				ld.extra = []string{"-E", ecsOption}
			}
			s := plain
			if c.geoip {
				s = geo
			}
			var t throughput
			err := cp.while(func() (err error) { t, err = ld.saturate(s); return err })
			if err != nil {
				return err
			}
			cpu[i], qps[i] = append(cpu[i], t.cpuPerQ), append(qps[i], t.qps)
			log.Printf("steering round %d: %s: %.0f q/s, %s CPU/query", round+1, c.desc, t.qps, t.cpuPerQ)
		}
	}
	var b strings.Builder
	// Two baselines: the plain name in the same block (what steering
	// itself costs), and in a block without metadata and geoip (what the
	// geoip plugin costs every query of its block).
	fmt.Fprintf(&b, "| Query | q/s (median) | server CPU per query (median) | × plain name, same block | × plain name, no geoip |\n|---|---|---|---|---|\n")
	base, bare := medianCPU(cpu[1]), medianCPU(cpu[0])
	for i, c := range steerCases {
		m := medianCPU(cpu[i])
		fmt.Fprintf(&b, "| %s | %.0f | %.1f µs | %.2f | %.2f |\n", c.desc, medianF(qps[i]), float64(m)/1e3, float64(m)/float64(base), float64(m)/float64(bare))
	}
	fmt.Print(b.String())
	return nil
}

func medianCPU(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func medianF(fs []float64) float64 {
	s := slices.Clone(fs)
	slices.Sort(s)
	return s[len(s)/2]
}

// steeringGateway is gateway with the metadata and geoip plugins in the
// server block, reading mmdb.
func (c *servers) steeringGateway(ns, mmdb string) (*server, error) {
	port := c.basePort + 1 // whoami's: the steering run starts no whoami
	conf, err := c.writeFile("Corefile.steering", fmt.Sprintf(`%s:%d {
    bind 127.0.0.1
    metadata
    geoip %s {
        edns-subnet
    }
    k8s_gateway %s {
        kubeconfig %s
        resources Service
        namespaces %s
        ttl %d
    }
}
`, c.zone, port, mmdb, c.zone, c.kubeconfig, ns, ttl))
	if err != nil {
		return nil, err
	}
	return start("k8s_gateway with geoip", port, c.cpu, nil, c.coredns, "-conf", conf)
}
