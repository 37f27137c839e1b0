package source

import (
	"encoding/json"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ServiceNameLabel names the Service an EndpointSlice belongs to.
const ServiceNameLabel = "kubernetes.io/service-name"

// EndpointSlice is what the health option keeps of an EndpointSlice
// (discovery.k8s.io/v1): its Service and whether one of its endpoints is
// ready, decoded straight from the API server's protobuf. Endpoints,
// addresses and ports are skipped: the decision needs none of them.
//
// Ready is the endpoint's ready condition (absent means true): what
// kube-proxy sends new connections to. It is false for a terminating
// endpoint, and true for a not-ready pod only when the Service asked for it
// (publishNotReadyAddresses).
type EndpointSlice struct {
	objectMeta
	service string // the kubernetes.io/service-name label
	ready   bool   // some endpoint is ready
}

// Service returns the name of the slice's Service, "" when it has none.
func (s *EndpointSlice) Service() string { return s.service }

// Ready reports whether some endpoint of the slice is ready.
func (s *EndpointSlice) Ready() bool { return s.ready }

// NewEndpointSlice returns a slice of service in namespace, for tests and
// benchmarks of other packages.
func NewEndpointSlice(namespace, name, service string, ready bool) *EndpointSlice {
	s := &EndpointSlice{service: service, ready: ready}
	s.SetNamespace(namespace)
	s.name = name
	return s
}

// Field numbers of the protobuf of an EndpointSlice (k8s.io/api/discovery/v1).
const (
	pbSliceMetadata, pbSliceEndpoints = 1, 2
	pbEndpointConditions              = 2
	pbConditionReady                  = 1
	pbMetaLabels                      = 11
)

// Reset implements the protobuf decoder's interface.
func (s *EndpointSlice) Reset() { *s = EndpointSlice{} }

// Unmarshal reads an EndpointSlice in protobuf into s.
func (s *EndpointSlice) Unmarshal(b []byte) error {
	return pbFields(b, func(num protowire.Number, v []byte) error {
		switch num {
		case pbSliceMetadata:
			if _, _, err := s.objectMeta.unmarshal(v, ""); err != nil {
				return err
			}
			return pbFields(v, func(num protowire.Number, v []byte) error {
				if num != pbMetaLabels {
					return nil
				}
				k, val, err := pbMapEntry(v)
				if err == nil && string(k) == ServiceNameLabel {
					s.service = string(val)
				}
				return err
			})
		case pbSliceEndpoints:
			if s.ready {
				return nil
			}
			ready := true // an endpoint without conditions is ready
			err := pbFields(v, func(num protowire.Number, v []byte) error {
				if num != pbEndpointConditions {
					return nil
				}
				var err error
				ready, err = pbBool(v, pbConditionReady, true)
				return err
			})
			s.ready = ready
			return err
		}
		return nil
	})
}

// pbBool returns the optional bool field num of the message b, or absent.
func pbBool(b []byte, num protowire.Number, absent bool) (bool, error) {
	out := absent
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return false, pbError(l)
		}
		b = b[l:]
		if n == num && typ == protowire.VarintType {
			v, l := protowire.ConsumeVarint(b)
			if l < 0 {
				return false, pbError(l)
			}
			out, b = v != 0, b[l:]
			continue
		}
		if l = protowire.ConsumeFieldValue(n, typ, b); l < 0 {
			return false, pbError(l)
		}
		b = b[l:]
	}
	return out, nil
}

// UnmarshalJSON reads an EndpointSlice in JSON into s.
func (s *EndpointSlice) UnmarshalJSON(data []byte) error {
	var o struct {
		Metadata  metav1.ObjectMeta `json:"metadata"`
		Endpoints []struct {
			Conditions struct {
				Ready *bool `json:"ready"`
			} `json:"conditions"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(data, &o); err != nil {
		return err
	}
	*s = EndpointSlice{objectMeta: newObjectMeta(&o.Metadata), service: o.Metadata.Labels[ServiceNameLabel]}
	s.annotations = nil
	for _, e := range o.Endpoints {
		if e.Conditions.Ready == nil || *e.Conditions.Ready {
			s.ready = true
		}
	}
	return nil
}

// DeepCopyObject implements runtime.Object.
func (s *EndpointSlice) DeepCopyObject() runtime.Object {
	out := *s
	out.objectMeta = s.objectMeta.deepCopy()
	return &out
}

// EndpointSliceList is a list of slices, as the informer lists them.
type EndpointSliceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []EndpointSlice `json:"items"`
}

// Unmarshal reads an EndpointSliceList in protobuf.
func (l *EndpointSliceList) Unmarshal(b []byte) error {
	return unmarshalList(b, &l.ListMeta, &l.Items)
}

// Reset implements the protobuf decoder's interface.
func (l *EndpointSliceList) Reset() { *l = EndpointSliceList{} }

// DeepCopyObject implements runtime.Object.
func (l *EndpointSliceList) DeepCopyObject() runtime.Object {
	out := &EndpointSliceList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]EndpointSlice, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*EndpointSlice)
	}
	return out
}

// EndpointSliceKind is read, with the health option, for the health of
// Services: it publishes nothing itself.
var EndpointSliceKind = &Kind{
	Name: "EndpointSlice", GroupVersion: "discovery.k8s.io/v1", Resource: "endpointslices",
	Object: &EndpointSlice{}, List: &EndpointSliceList{}, Protobuf: true,
}
