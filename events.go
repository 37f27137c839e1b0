package gateway

import (
	"context"
	"fmt"
	"strings"

	"github.com/seed-e581d630/k8s_gateway/source"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/seed-e581d630/k8s_gateway/index"
)

// Reasons of the Events the plugin emits on objects (the events option).
const (
	eventNameRejected = "DNSNameRejected"
	eventNameConflict = "DNSNameConflict"
)

// events tells tenants, on their own objects, which names the ownership
// policy rejected. Its eventWriter rate-limits and de-duplicates Events per
// object as kubelet's are (an Event repeated counts up instead of piling up).
type events struct {
	writer *eventWriter
	// version returns the group version at which the plugin reads kind in
	// namespace, "" when it does not know: routes may be served only at an
	// older version than the one objectReference names.
	version func(kind, namespace string) string
}

func newEvents(sink eventSink, version func(kind, namespace string) string) *events {
	return &events{writer: newEventWriter(sink), version: version}
}

// reference returns the reference to the object of key, at the version read.
func (e *events) reference(key string) (objectRef, bool) {
	ref, ok := objectReference(key)
	if ok && e.version != nil {
		if v := e.version(ref.kind, ref.namespace); v != "" {
			ref.apiVersion = v
		}
	}
	return ref, ok
}

// rejected emits DNSNameRejected on the object whose claim was rejected. The
// owner of a name is another tenant: the Event does not name it.
func (e *events) rejected(r index.Rejection) {
	ref, ok := e.reference(r.Key)
	if !ok {
		return
	}
	var why string
	switch r.Reason {
	case index.ReasonOwned:
		why = "another namespace published it first"
	case index.ReasonUndelegated:
		why = "it is outside the domains delegated to this namespace"
	default:
		why = "the zone apex and the nameserver names belong to the DNS server"
	}
	e.writer.emit(ref, eventWarning, eventNameRejected, fmt.Sprintf("DNS name %s (zone %s) not published: %s", strings.TrimSuffix(r.Name, "."), r.Zone, why))
}

// conflicted emits DNSNameConflict on every object taking part in a merge
// conflict. The message names the objects only when they all belong to one
// namespace: a tenant never learns another tenant's objects from it.
func (e *events) conflicted(c index.Conflict) {
	same := true
	for _, ns := range c.Namespaces {
		same = same && ns == c.Namespaces[0]
	}
	msg := fmt.Sprintf("DNS name %s: %s", strings.TrimSuffix(c.Name, "."), c.Message)
	if !same {
		msg = fmt.Sprintf("DNS name %s: objects of several namespaces publish different records here; they were merged or some were dropped", strings.TrimSuffix(c.Name, "."))
	}
	for _, key := range c.Keys {
		if ref, ok := e.reference(key); ok {
			e.writer.emit(ref, eventWarning, eventNameConflict, msg)
		}
	}
}

func (e *events) stop() { e.writer.stop() }

// objectReference turns an index key, "Kind/namespace/name", into a
// reference to the object; false for keys that name no object of a kind the
// plugin reads.
func objectReference(key string) (objectRef, bool) {
	parts := strings.SplitN(key, "/", 3)
	if len(parts) != 3 || parts[1] == "" {
		return objectRef{}, false
	}
	for _, k := range source.Kinds {
		if k.Name == parts[0] {
			return objectRef{apiVersion: k.GroupVersion, kind: k.Name, namespace: parts[1], name: parts[2]}, true
		}
	}
	if parts[0] == source.GatewayKind.Name {
		return objectRef{apiVersion: source.GatewayKind.GroupVersion, kind: source.GatewayKind.Name, namespace: parts[1], name: parts[2]}, true
	}
	return objectRef{}, false
}

// eventsResource is where Events are written, as JSON through the dynamic
// client: the plugin has no use for the Event type otherwise.
var eventsResource = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// restEventSink writes Events with the dynamic client.
type restEventSink struct{ client dynamic.Interface }

// uid lists the object by name, as the plugin may list but not get.
func (s restEventSink) uid(ctx context.Context, ref objectRef) string {
	gvr, ok := resourceOf(ref)
	if !ok {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, eventTimeout)
	defer cancel()
	list, err := s.client.Resource(gvr).Namespace(ref.namespace).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + ref.name, Limit: 1})
	if err != nil || len(list.Items) == 0 {
		return ""
	}
	return string(list.Items[0].GetUID())
}

// resourceOf returns the resource of the kind ref names.
func resourceOf(ref objectRef) (schema.GroupVersionResource, bool) {
	gv, err := schema.ParseGroupVersion(ref.apiVersion)
	if err != nil {
		return schema.GroupVersionResource{}, false
	}
	for _, k := range source.Kinds {
		if k.Name == ref.kind {
			return gv.WithResource(k.Resource), true
		}
	}
	if ref.kind == source.GatewayKind.Name {
		return gv.WithResource(source.GatewayKind.Resource), true
	}
	return schema.GroupVersionResource{}, false
}

func (s restEventSink) create(ctx context.Context, ev *event) error {
	_, err := s.client.Resource(eventsResource).Namespace(ev.about.namespace).Create(ctx, &unstructured.Unstructured{Object: ev.object()}, metav1.CreateOptions{})
	return err
}

func (s restEventSink) patch(ctx context.Context, namespace, name string, mergePatch []byte) error {
	_, err := s.client.Resource(eventsResource).Namespace(namespace).Patch(ctx, name, types.MergePatchType, mergePatch, metav1.PatchOptions{})
	return err
}

// eventSinker is an apiClient that can write Events.
type eventSinker interface {
	eventSink() (eventSink, error)
}

func (a *restAPI) eventSink() (eventSink, error) { return restEventSink{a.dynamic}, nil }
