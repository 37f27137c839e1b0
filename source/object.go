package source

import (
	"slices"
	"strings"
	"time"
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The informers of the most numerous kinds, Ingresses, Services and routes,
// keep types of our own rather than the API types (whose metadata alone is
// about 250 bytes, slimmed or not), holding what the records functions read
// and what the informer's store and the controller need. Ingresses and
// Services are decoded straight into them (protobuf.go); routes are
// converted by their transform. BenchmarkCacheBytes measures what they keep
// per object.

// sourceMeta is what the sources read of an object's metadata: the ignore
// label and the annotations of sourceAnnotations.
type sourceMeta interface {
	// ignored reports whether the object opted out with the ignore label.
	ignored() bool
	annotation(key string) (string, bool)
}

// apiMeta is the sourceMeta of an object kept as an API type.
type apiMeta struct{ *metav1.ObjectMeta }

func (m apiMeta) ignored() bool { return strings.EqualFold(m.Labels[IgnoreLabel], "true") }

func (m apiMeta) annotation(key string) (string, bool) {
	v, ok := m.Annotations[key]
	return v, ok
}

// objectMeta is the metadata of an ingress or a service. It implements
// metav1.Object, as the informer's store (keys, namespace index, resource
// versions) and the controller (keys, claims) read it; of the setters, those
// of the fields it has work, the others do nothing.
type objectMeta struct {
	noMeta
	name string
	// namespace is interned: the objects of a namespace share its name.
	namespace unique.Handle[string]
	// resourceVersion tells the informer an update from a resync.
	resourceVersion string
	// created is the creation time in Unix nanoseconds, 0 when unset: the
	// ownership policy orders claims by it (claimOf).
	created int64
	// annotations are the object's annotations among sourceAnnotations, as
	// key, value pairs; nil when it has none, as most objects (a pointer
	// makes those 16 bytes smaller).
	annotations *[]string
	ignore      bool // the ignore label is "true"
	// key is the object's index key, Kind/namespace/name, once WithKey made
	// it in the shared informer's cache: every view reading the object
	// keeps this one string instead of a copy of its own.
	key string
}

// newObjectMeta keeps of m what an objectMeta holds.
func newObjectMeta(m *metav1.ObjectMeta) objectMeta {
	out := objectMeta{
		name:            m.Name,
		namespace:       unique.Make(m.Namespace),
		resourceVersion: m.ResourceVersion,
		ignore:          apiMeta{m}.ignored(),
	}
	out.SetCreationTimestamp(m.CreationTimestamp)
	out.SetAnnotations(m.Annotations)
	return out
}

func (m *objectMeta) deepCopy() objectMeta {
	out := *m
	if m.annotations != nil {
		kv := slices.Clone(*m.annotations)
		out.annotations = &kv
	}
	return out
}

// pairs returns the annotations kept, as key, value pairs.
func (m *objectMeta) pairs() []string {
	if m.annotations == nil {
		return nil
	}
	return *m.annotations
}

func (m *objectMeta) ignored() bool { return m.ignore }

func (m *objectMeta) annotation(key string) (string, bool) {
	kv := m.pairs()
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] == key {
			return kv[i+1], true
		}
	}
	return "", false
}

func (m *objectMeta) GetName() string     { return m.name }
func (m *objectMeta) SetName(name string) { m.name, m.key = name, "" }

func (m *objectMeta) GetNamespace() string {
	if m.namespace == (unique.Handle[string]{}) {
		return ""
	}
	return m.namespace.Value()
}

func (m *objectMeta) SetNamespace(namespace string) {
	m.namespace, m.key = unique.Make(namespace), ""
}

func (m *objectMeta) indexKey() string { return m.key }

func (m *objectMeta) setIndexKey(kind string) {
	m.key = kind + "/" + m.GetNamespace() + "/" + m.name
}

// keyed is an object that keeps its index key (see WithKey).
type keyed interface {
	indexKey() string
	setIndexKey(kind string)
}

// WithKey returns transform (nil: none) followed by the making of the
// object's index key, kind/namespace/name, which KeyOf returns: made once
// per object in the informer's cache, one string that every view of the
// cluster shares.
func WithKey(kind string, transform func(any) (any, error)) func(any) (any, error) {
	return func(obj any) (any, error) {
		if transform != nil {
			var err error
			if obj, err = transform(obj); err != nil {
				return obj, err
			}
		}
		if k, ok := obj.(keyed); ok {
			k.setIndexKey(kind)
		}
		return obj, nil
	}
}

// KeyOf returns the index key WithKey gave obj, or "".
func KeyOf(obj any) string {
	if k, ok := obj.(keyed); ok {
		return k.indexKey()
	}
	return ""
}

func (m *objectMeta) GetResourceVersion() string        { return m.resourceVersion }
func (m *objectMeta) SetResourceVersion(version string) { m.resourceVersion = version }

func (m *objectMeta) GetCreationTimestamp() metav1.Time {
	if m.created == 0 {
		return metav1.Time{}
	}
	return metav1.NewTime(time.Unix(0, m.created))
}

func (m *objectMeta) SetCreationTimestamp(t metav1.Time) {
	m.created = 0
	if !t.IsZero() {
		m.created = t.UnixNano()
	}
}

// GetLabels returns the ignore label, the one label kept.
func (m *objectMeta) GetLabels() map[string]string {
	if !m.ignore {
		return nil
	}
	return map[string]string{IgnoreLabel: "true"}
}

func (m *objectMeta) SetLabels(labels map[string]string) {
	m.ignore = strings.EqualFold(labels[IgnoreLabel], "true")
}

// GetAnnotations returns the annotations kept, those the sources read.
func (m *objectMeta) GetAnnotations() map[string]string {
	kv := m.pairs()
	if len(kv) == 0 {
		return nil
	}
	out := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// SetAnnotations keeps those of annotations that the sources read (and
// that of a WatchList's closing bookmark, see decodedAnnotations).
func (m *objectMeta) SetAnnotations(annotations map[string]string) {
	var kv []string
	for _, k := range decodedAnnotations {
		if v, ok := annotations[k]; ok {
			kv = append(kv, k, v)
		}
	}
	m.annotations = nil
	if kv != nil {
		kv = slices.Clip(kv)
		m.annotations = &kv
	}
}

// noMeta implements the metav1.Object methods of the fields that objectMeta
// does not keep: the getters return the zero value, the setters do nothing.
type noMeta struct{}

func (noMeta) GetObjectKind() schema.ObjectKind              { return schema.EmptyObjectKind }
func (noMeta) GetGenerateName() string                       { return "" }
func (noMeta) SetGenerateName(string)                        {}
func (noMeta) GetUID() types.UID                             { return "" }
func (noMeta) SetUID(types.UID)                              {}
func (noMeta) GetGeneration() int64                          { return 0 }
func (noMeta) SetGeneration(int64)                           {}
func (noMeta) GetSelfLink() string                           { return "" }
func (noMeta) SetSelfLink(string)                            {}
func (noMeta) GetDeletionTimestamp() *metav1.Time            { return nil }
func (noMeta) SetDeletionTimestamp(*metav1.Time)             {}
func (noMeta) GetDeletionGracePeriodSeconds() *int64         { return nil }
func (noMeta) SetDeletionGracePeriodSeconds(*int64)          {}
func (noMeta) GetFinalizers() []string                       { return nil }
func (noMeta) SetFinalizers([]string)                        {}
func (noMeta) GetOwnerReferences() []metav1.OwnerReference   { return nil }
func (noMeta) SetOwnerReferences([]metav1.OwnerReference)    {}
func (noMeta) GetManagedFields() []metav1.ManagedFieldsEntry { return nil }
func (noMeta) SetManagedFields([]metav1.ManagedFieldsEntry)  {}

// lbAddress is one entry of status.loadBalancer.ingress: an IP or a
// hostname, as the load balancer reports it.
type lbAddress struct{ ip, hostname string }

// lbAddresses keeps the entries of a status.loadBalancer.ingress list (of
// Ingresses or Services) that have an IP or a hostname; addr reads one.
func lbAddresses[E any](entries []E, addr func(*E) lbAddress) []lbAddress {
	if len(entries) == 0 {
		return nil
	}
	out := make([]lbAddress, 0, len(entries))
	for i := range entries {
		if a := addr(&entries[i]); a.ip != "" || a.hostname != "" {
			out = append(out, a)
		}
	}
	return out
}

// addLBAddresses adds a load balancer's addresses to t.
func addLBAddresses(r *Result, t *targets, lb []lbAddress) {
	for _, a := range lb {
		t.addIP(r, a.ip, "status.loadBalancer")
		t.add(r, a.hostname, "status.loadBalancer")
	}
}
