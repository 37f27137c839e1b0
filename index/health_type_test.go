package index

import "testing"

// Health and priority choose among the target records (A, AAAA, CNAME) of
// a name, per address type: other types never withdraw or hide targets,
// and an address type that only unhealthy objects publish fails open.
func TestHealthPerType(t *testing.T) {
	type obj struct {
		key       string
		unhealthy bool
		priority  int32
		rrs       []string
	}
	const www = "www.example.com. 60 IN "
	for _, c := range []struct {
		desc string
		objs []obj
		want string // dumpNode of www
		zh   ZoneHealth
	}{
		{
			desc: "a healthy TXT keeps the unhealthy A",
			objs: []obj{{"a", true, 0, []string{www + "A 192.0.2.1"}}, {"t", false, 0, []string{www + `TXT "v=1"`}}},
			want: `www.example.com. [A 60:192.0.2.1] [TXT 60:"v=1"]`,
			zh:   ZoneHealth{Unhealthy: 1, FailOpen: 1},
		},
		{
			desc: "an unhealthy TXT stays beside a healthy A",
			objs: []obj{{"a", false, 0, []string{www + "A 192.0.2.1"}}, {"t", true, 0, []string{www + `TXT "v=1"`}}},
			want: `www.example.com. [A 60:192.0.2.1] [TXT 60:"v=1"]`,
		},
		{
			desc: "a primary's TXT does not hide the standby's A",
			objs: []obj{{"one", false, 1, []string{www + `TXT "v=1"`}}, {"two", false, 2, []string{www + "A 192.0.2.2"}}},
			want: `www.example.com. [A 60:192.0.2.2] [TXT 60:"v=1"]`,
		},
		{
			desc: "an MX and a CAA of a healthy object keep the unhealthy A",
			objs: []obj{{"a", true, 0, []string{www + "A 192.0.2.1"}}, {"m", false, 0, []string{www + "MX 10 mail.example.com.", www + `CAA 0 issue "ca.example"`}}},
			want: `www.example.com. [A 60:192.0.2.1] [MX 60:10 mail.example.com.] [CAA 60:0 issue "ca.example"]`,
			zh:   ZoneHealth{Unhealthy: 1, FailOpen: 1},
		},
		{
			desc: "a withdrawn object keeps its TXT",
			objs: []obj{{"a", true, 0, []string{www + "A 192.0.2.1", www + `TXT "a"`}}, {"b", false, 0, []string{www + "A 192.0.2.2"}}},
			want: `www.example.com. [A 60:192.0.2.2] [TXT 60:"a"]`,
			zh:   ZoneHealth{Unhealthy: 1},
		},
		{
			desc: "a standby keeps its TXT",
			objs: []obj{{"one", false, 1, []string{www + "A 192.0.2.1"}}, {"two", false, 2, []string{www + "A 192.0.2.2", www + `TXT "two"`}}},
			want: `www.example.com. [A 60:192.0.2.1] [TXT 60:"two"]`,
		},
		{
			desc: "a healthy A does not withdraw an unhealthy AAAA",
			objs: []obj{{"a", false, 0, []string{www + "A 192.0.2.1"}}, {"b", true, 0, []string{www + "AAAA 2001:db8::2"}}},
			want: `www.example.com. [A 60:192.0.2.1] [AAAA 60:2001:db8::2]`,
			zh:   ZoneHealth{Unhealthy: 1, FailOpen: 1},
		},
		{
			desc: "the primary's A, the standby's AAAA where the primary has none",
			objs: []obj{{"one", false, 1, []string{www + "A 192.0.2.1"}}, {"two", false, 2, []string{www + "A 192.0.2.2", www + "AAAA 2001:db8::2"}}},
			want: `www.example.com. [A 60:192.0.2.1] [AAAA 60:2001:db8::2]`,
		},
		{
			desc: "a CNAME counts for both address types: the primary's CNAME hides the standby's A",
			objs: []obj{{"one", false, 1, []string{www + "CNAME lb.example.net."}}, {"two", false, 2, []string{www + "A 192.0.2.2"}}},
			want: `www.example.com. [CNAME 60:lb.example.net.]`,
		},
		{
			desc: "an unhealthy CNAME, a healthy A",
			objs: []obj{{"c", true, 0, []string{www + "CNAME lb.example.net."}}, {"b", false, 0, []string{www + "A 192.0.2.2"}}},
			// The AAAA choice fails open to the CNAME, which the merge
			// drops beside the A (a CNAME cannot share its name).
			want: `www.example.com. [A 60:192.0.2.2]`,
			zh:   ZoneHealth{Unhealthy: 1, FailOpen: 1},
		},
	} {
		t.Run(c.desc, func(t *testing.T) {
			ix, _ := newTestIndex(t, "example.com.")
			var l healthLog
			ix.setListener(&l)
			ix.Flush()
			for _, o := range c.objs {
				ix.UpdateClaim("Service/ns/"+o.key, Claim{Namespace: "ns", Unhealthy: o.unhealthy, Priority: o.priority}, qtRRs(o.rrs...))
			}
			if got := dumpNode(ix.Snapshot().get("www.example.com.")); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
			if got := ix.Health("example.com."); got != c.zh {
				t.Errorf("health %+v, want %+v", got, c.zh)
			}
			for _, o := range c.objs {
				ix.UpdateClaim("Service/ns/"+o.key, Claim{}, nil)
			}
			if got := ix.Health("example.com."); got != (ZoneHealth{}) {
				t.Errorf("after removal: %+v", got)
			}
			checkIndexInvariants(t, ix)
		})
	}
}
