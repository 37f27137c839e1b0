package fleet

import "testing"

// TestFleetOf maps index keys to their clusters.
func TestFleetOf(t *testing.T) {
	var f Fleet
	f.Add(&Cluster{Name: "prod"})
	f.Add(&Cluster{Name: "stage"})
	for _, tc := range []struct{ key, cluster, rest string }{
		{"prod/Ingress/apps/web", "prod", "Ingress/apps/web"},
		{"stage/Nameserver/kube-system/dns", "stage", "Nameserver/kube-system/dns"},
		{"other/Ingress/apps/web", "", ""},
		{"Ingress/apps/web", "", ""},
	} {
		cl, rest := f.Of(tc.key)
		name := ""
		if cl != nil {
			name = cl.Name
		} else {
			rest = ""
		}
		if name != tc.cluster || rest != tc.rest {
			t.Errorf("of(%q) = %q, %q; want %q, %q", tc.key, name, rest, tc.cluster, tc.rest)
		}
	}
	var single Fleet
	single.Add(&Cluster{Name: ""})
	if cl, rest := single.Of("Ingress/apps/web"); cl == nil || rest != "Ingress/apps/web" {
		t.Errorf("the unnamed cluster does not own its keys: %v %q", cl, rest)
	}
}
