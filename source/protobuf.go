package source

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unique"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The informers of Ingresses and Services decode the API server's protobuf
// straight into ingress and service, reading the few fields the sources
// use and skipping the rest: no API object is made and thrown away for
// each one listed or watched. The field numbers are those of the
// generated.proto files of k8s.io/api and k8s.io/apimachinery; the tests
// decode what the API types encode.

// pbFields calls f with the number of each length-delimited field of the
// protobuf message b and its bytes, in the order they come. Fields of other
// wire types are skipped.
func pbFields(b []byte, f func(num protowire.Number, v []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return pbError(n)
		}
		b = b[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return pbError(n)
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return pbError(n)
		}
		b = b[n:]
		if err := f(num, v); err != nil {
			return err
		}
	}
	return nil
}

// pbVarint returns the varint field num of the message b, 0 when it has none.
func pbVarint(b []byte, want protowire.Number) (uint64, error) {
	var out uint64
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, pbError(n)
		}
		b = b[n:]
		if num == want && typ == protowire.VarintType {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return 0, pbError(n)
			}
			out, b = v, b[n:]
			continue
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return 0, pbError(n)
		}
		b = b[n:]
	}
	return out, nil
}

func pbError(n int) error { return fmt.Errorf("protobuf: %w", protowire.ParseError(n)) }

// pbMapEntry returns the key (field 1) and value (field 2) of an entry of a
// map<string, string>.
func pbMapEntry(b []byte) (key, value []byte, err error) {
	err = pbFields(b, func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			key = v
		case 2:
			value = v
		}
		return nil
	})
	return key, value, err
}

// Kept besides sourceAnnotations while decoding: the annotation of the
// bookmark that ends a WatchList's initial events, which the reflector reads.
var decodedAnnotations = append(slices.Clip(sourceAnnotations), metav1.InitialEventsAnnotationKey)

// unmarshal reads an ObjectMeta into m: name, namespace, resourceVersion,
// creationTimestamp, the ignore label and the annotations of
// decodedAnnotations. It also returns the value of the annotation also, if
// the object has it.
func (m *objectMeta) unmarshal(b []byte, also string) (alsoValue string, hasAlso bool, err error) {
	type kept struct {
		i     int // in decodedAnnotations
		value string
	}
	var annotations []kept
	err = pbFields(b, func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			m.name = string(v)
		case 3:
			m.namespace = unique.Make(string(v))
		case 6:
			m.resourceVersion = string(v)
		case 8: // Time: seconds (1), nanos (2)
			s, err := pbVarint(v, 1)
			if err != nil {
				return err
			}
			ns, err := pbVarint(v, 2)
			if err != nil {
				return err
			}
			m.created = time.Unix(int64(s), int64(int32(ns))).UnixNano()
		case 11:
			k, val, err := pbMapEntry(v)
			if err == nil && string(k) == IgnoreLabel {
				m.ignore = strings.EqualFold(string(val), "true")
			}
			return err
		case 12:
			k, val, err := pbMapEntry(v)
			if err != nil {
				return err
			}
			if also != "" && string(k) == also {
				alsoValue, hasAlso = string(val), true
			}
			i := slices.IndexFunc(decodedAnnotations, func(a string) bool { return a == string(k) })
			if i < 0 {
				return nil
			}
			// A key given twice keeps its last value, as a protobuf map does.
			if j := slices.IndexFunc(annotations, func(a kept) bool { return a.i == i }); j >= 0 {
				annotations[j].value = string(val)
				return nil
			}
			annotations = append(annotations, kept{i, string(val)})
		}
		return nil
	})
	if annotations != nil {
		// In the order of decodedAnnotations, as SetAnnotations keeps them.
		slices.SortFunc(annotations, func(a, b kept) int { return a.i - b.i })
		kv := make([]string, 0, 2*len(annotations))
		for _, a := range annotations {
			kv = append(kv, decodedAnnotations[a.i], a.value)
		}
		m.annotations = &kv
	}
	return alsoValue, hasAlso, err
}

// unmarshalList reads a list (ServiceList, IngressList) in protobuf: its
// ListMeta (field 1) and its items (field 2).
func unmarshalList[T any, PT interface {
	*T
	Unmarshal([]byte) error
}](b []byte, meta *metav1.ListMeta, items *[]T) error {
	return pbFields(b, func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			return meta.Unmarshal(v)
		case 2:
			var item T
			if err := PT(&item).Unmarshal(v); err != nil {
				return err
			}
			*items = append(*items, item)
		}
		return nil
	})
}

// unmarshalLBStatus reads the status of a Service or an Ingress, whose
// loadBalancer (field 1) lists ingress points (field 1) of an ip (1) and a
// hostname (2) each, into the addresses that have either.
func unmarshalLBStatus(b []byte) ([]lbAddress, error) {
	var out []lbAddress
	err := pbFields(b, func(num protowire.Number, v []byte) error {
		if num != 1 {
			return nil
		}
		return pbFields(v, func(num protowire.Number, v []byte) error {
			if num != 1 {
				return nil
			}
			var a lbAddress
			err := pbFields(v, func(num protowire.Number, v []byte) error {
				switch num {
				case 1:
					a.ip = string(v)
				case 2:
					a.hostname = string(v)
				}
				return nil
			})
			if a.ip != "" || a.hostname != "" {
				out = append(out, a)
			}
			return err
		})
	})
	return slices.Clip(out), err
}

// lbStatusJSON is status.loadBalancer of a Service or an Ingress in JSON.
type lbStatusJSON struct {
	Ingress []struct {
		IP       string `json:"ip"`
		Hostname string `json:"hostname"`
	} `json:"ingress"`
}

func (s lbStatusJSON) addresses() []lbAddress {
	var out []lbAddress
	for _, e := range s.Ingress {
		if e.IP != "" || e.Hostname != "" {
			out = append(out, lbAddress{e.IP, e.Hostname})
		}
	}
	return slices.Clip(out)
}
