package gateway

import (
	"testing"
	"time"

	"github.com/coredns/caddy"
)

func TestHealthOption(t *testing.T) {
	for _, c := range []struct {
		corefile string
		health   bool
		err      bool
	}{
		{"k8s_gateway example.com", false, false},
		{"k8s_gateway example.com {\n health\n}", true, false},
		{"k8s_gateway example.com {\n health on\n}", false, true},
	} {
		g, err := parse(caddy.NewTestController("dns", c.corefile))
		if (err != nil) != c.err {
			t.Errorf("%q: error %v", c.corefile, err)
			continue
		}
		if err == nil && g.health != c.health {
			t.Errorf("%q: health %v", c.corefile, g.health)
		}
	}
}

func TestPriorityAndFailoverOptions(t *testing.T) {
	corefile := `k8s_gateway example.com {
    failover 30s
    cluster one {
        priority 1
    }
    cluster two {
        priority 2
        failover 1m
    }
    cluster three
}`
	g, err := parse(caddy.NewTestController("dns", corefile))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]any{"one": {int32(1), 30 * time.Second}, "two": {int32(2), time.Minute}, "three": {int32(0), 30 * time.Second}}
	for _, spec := range g.clusters {
		o := spec.resolved(g.clusterOptions)
		cfg := g.controllerConfigOf(&o, g.Zones, false)
		if got := [2]any{cfg.Priority, cfg.Failover}; got != want[spec.name] {
			t.Errorf("cluster %s: priority, failover %v, want %v", spec.name, got, want[spec.name])
		}
	}
	for _, bad := range []string{"priority", "priority -1", "priority x", "priority 1 2", "failover", "failover 10ms", "failover soon"} {
		if _, err := parse(caddy.NewTestController("dns", "k8s_gateway example.com {\n cluster one {\n "+bad+"\n }\n}")); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestLogLimiter(t *testing.T) {
	var l logLimiter
	now := time.Unix(1000, 0)
	allowed := 0
	for range 25 {
		if l.allow(now) {
			allowed++
		}
	}
	if allowed != logBurst || l.takeSuppressed() != 25-logBurst || l.takeSuppressed() != 0 {
		t.Errorf("allowed %d of 25 in a second", allowed)
	}
	if !l.allow(now.Add(time.Second)) {
		t.Error("not allowed in the next second")
	}
}
