package acmeupdate

import (
	"testing"

	"github.com/miekg/dns"

	"github.com/seed-e581d630/k8s_gateway/index"
)

func TestOwnership(t *testing.T) {
	owners := map[string][]string{ // name → the namespaces owning it or a name below
		"a.example.com.":      {"team-a"},
		"www.a.example.com.":  {"team-a"},
		"example.com.":        {"", "team-a", "team-b"},
		"ns.example.com.":     {""},
		"shared.example.com.": {"team-a", "team-b"},
	}
	delegated := map[string]string{"team-a": "a.example.com.", "team-b": "b.example.com."}
	o := Ownership{
		Owners:     func(_, name string) []string { return owners[name] },
		MayPublish: func(ns, name string) bool { return dns.IsSubDomain(delegated[ns], name) },
	}
	cases := []struct {
		policy   index.Policy
		ns, name string
		ok       bool
	}{
		{index.Union, "team-b", "a.example.com.", true},
		{index.Union, "team-b", "example.com.", true},
		{index.First, "team-a", "a.example.com.", true},
		{index.First, "team-a", "www.a.example.com.", true},
		{index.First, "team-b", "a.example.com.", false},
		{index.First, "team-b", "free.example.com.", true},
		{index.First, "team-b", "example.com.", false},
		{index.First, "team-a", "ns.example.com.", false},
		{index.First, "team-a", "shared.example.com.", false},
		{index.Delegated, "team-a", "a.example.com.", true},
		{index.Delegated, "team-a", "x.a.example.com.", true},
		{index.Delegated, "team-b", "b.example.com.", true},
		{index.Delegated, "team-b", "a.example.com.", false},
		{index.Delegated, "team-b", "free.example.com.", false},
	}
	for _, c := range cases {
		o.Policy = c.policy
		ok, why := o.MayChallenge(c.ns, "example.com.", c.name)
		if ok != c.ok || !ok && why == "" {
			t.Errorf("%s: %s at %s: %v (%q), want %v", c.policy, c.ns, c.name, ok, why, c.ok)
		}
	}
}
