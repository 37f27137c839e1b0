package source

import (
	"encoding/json"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEndpointSliceDecode(t *testing.T) {
	yes, no := true, false
	ep := func(ready *bool) discoveryv1.Endpoint {
		e := discoveryv1.Endpoint{Addresses: []string{"10.0.0.1"}}
		if ready != nil {
			e.Conditions.Ready = ready
			e.Conditions.Serving = &yes
		}
		return e
	}
	for _, c := range []struct {
		desc      string
		endpoints []discoveryv1.Endpoint
		want      bool
	}{
		{"no endpoints", nil, false},
		{"one ready", []discoveryv1.Endpoint{ep(&yes)}, true},
		{"one not ready", []discoveryv1.Endpoint{ep(&no)}, false},
		{"ready absent means ready", []discoveryv1.Endpoint{ep(nil)}, true},
		{"not ready then ready", []discoveryv1.Endpoint{ep(&no), ep(&yes)}, true},
		{"ready then not ready", []discoveryv1.Endpoint{ep(&yes), ep(&no)}, true},
	} {
		in := &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: "web-abc", Namespace: "ns", ResourceVersion: "7",
				Labels: map[string]string{"app": "x", ServiceNameLabel: "web"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   c.endpoints,
		}
		b, err := in.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		var pb EndpointSlice
		if err := pb.Unmarshal(b); err != nil {
			t.Fatalf("%s: %v", c.desc, err)
		}
		j, _ := json.Marshal(in)
		var js EndpointSlice
		if err := js.UnmarshalJSON(j); err != nil {
			t.Fatalf("%s: %v", c.desc, err)
		}
		for form, s := range map[string]*EndpointSlice{"protobuf": &pb, "json": &js} {
			if s.Ready() != c.want || s.Service() != "web" || s.GetNamespace() != "ns" || s.GetName() != "web-abc" || s.GetResourceVersion() != "7" {
				t.Errorf("%s (%s): ready %v service %q %s/%s rv %s, want ready %v", c.desc, form, s.Ready(), s.Service(), s.GetNamespace(), s.GetName(), s.GetResourceVersion(), c.want)
			}
		}
	}
}
