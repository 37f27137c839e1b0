package watch

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// Reasons of the Events the plugin emits on objects (the events option).
const (
	eventNameRejected = "DNSNameRejected"
	eventNameConflict = "DNSNameConflict"
	// With the health option: an object's addresses withdrawn, and back.
	eventUnhealthy = "DNSTargetsUnhealthy"
	eventHealthy   = "DNSTargetsHealthy"
)

// Events tells tenants, on their own objects, which names the ownership
// policy rejected. Its eventWriter rate-limits and de-duplicates Events per
// object as kubelet's are (an Event repeated counts up instead of piling up).
type Events struct {
	writer *eventWriter
	// version returns the group version at which the plugin reads kind in
	// namespace, "" when it does not know: routes may be served only at an
	// older version than the one objectReference names.
	version func(kind, namespace string) string
}

func newEvents(sink eventSink, version func(kind, namespace string) string) *Events {
	return &Events{writer: newEventWriter(sink), version: version}
}

// reference returns the reference to the object of key, at the version read.
func (e *Events) reference(key string) (ObjectRef, bool) {
	ref, ok := objectReference(key)
	if ok && e.version != nil {
		if v := e.version(ref.Kind, ref.Namespace); v != "" {
			ref.ApiVersion = v
		}
	}
	return ref, ok
}

// Rejected emits DNSNameRejected on the object whose claim was rejected. The
// owner of a name is another tenant: the Event does not name it.
func (e *Events) Rejected(r index.Rejection) {
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
	case index.ReasonQuota:
		why = fmt.Sprintf("the object's %d records do not fit in what this namespace's older objects leave of its quota of %d records; the object publishes nothing", r.Records, r.Quota)
	default:
		why = "the zone apex and the nameserver names belong to the DNS server"
	}
	e.writer.emit(ref, eventWarning, eventNameRejected, fmt.Sprintf("DNS name %s (zone %s) not published: %s", strings.TrimSuffix(r.Name, "."), r.Zone, why))
}

// Conflicted emits DNSNameConflict on every object taking part in a merge
// conflict. The message names the objects only when they all belong to one
// namespace: a tenant never learns another tenant's objects from it.
func (e *Events) Conflicted(c index.Conflict) {
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

// eventNormal is the type of the health Events.
const eventNormal = "Normal"

// HealthChanged emits one Normal Event on the object of key when its
// addresses are withdrawn for health, and one when they come back.
func (e *Events) HealthChanged(key string, unhealthy bool) {
	ref, ok := e.reference(key)
	if !ok {
		return
	}
	if unhealthy {
		e.writer.emit(ref, eventNormal, eventUnhealthy, "DNS: the addresses of this object are unhealthy and withdrawn from its names, unless no other target answers there")
		return
	}
	e.writer.emit(ref, eventNormal, eventHealthy, "DNS: the addresses of this object are healthy again and answer at its names")
}

func (e *Events) Stop() { e.writer.stop() }

// objectReference turns an index key, "Kind/namespace/name", into a
// reference to the object; false for keys that name no object of a kind the
// plugin reads.
func objectReference(key string) (ObjectRef, bool) {
	key = strings.TrimSuffix(key, unhealthyPart)
	parts := strings.SplitN(key, "/", 3)
	if len(parts) != 3 || parts[1] == "" {
		return ObjectRef{}, false
	}
	for _, k := range source.Kinds {
		if k.Name == parts[0] {
			return ObjectRef{ApiVersion: k.GroupVersion, Kind: k.Name, Namespace: parts[1], Name: parts[2]}, true
		}
	}
	if parts[0] == source.GatewayKind.Name {
		return ObjectRef{ApiVersion: source.GatewayKind.GroupVersion, Kind: source.GatewayKind.Name, Namespace: parts[1], Name: parts[2]}, true
	}
	return ObjectRef{}, false
}

// eventsResource is where Events are written, as JSON through the dynamic
// client: the plugin has no use for the Event type otherwise.
var eventsResource = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// ObjectUID lists the object by name, as the plugin may list but not get.
func (a *restAPI) ObjectUID(ctx context.Context, apiVersion, kind, namespace, name string) string {
	gvr, ok := resourceOf(ObjectRef{ApiVersion: apiVersion, Kind: kind})
	if !ok {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, eventTimeout)
	defer cancel()
	list, err := a.Dynamic.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, Limit: 1})
	if err != nil || len(list.Items) == 0 {
		return ""
	}
	return string(list.Items[0].GetUID())
}

// resourceOf returns the resource of the kind ref names.
func resourceOf(ref ObjectRef) (schema.GroupVersionResource, bool) {
	gv, err := schema.ParseGroupVersion(ref.ApiVersion)
	if err != nil {
		return schema.GroupVersionResource{}, false
	}
	for _, k := range source.Kinds {
		if k.Name == ref.Kind {
			return gv.WithResource(k.Resource), true
		}
	}
	if ref.Kind == source.GatewayKind.Name {
		return gv.WithResource(source.GatewayKind.Resource), true
	}
	return schema.GroupVersionResource{}, false
}

// CreateEvent writes the Event object with the dynamic client.
func (a *restAPI) CreateEvent(ctx context.Context, namespace string, object map[string]any) error {
	_, err := a.Dynamic.Resource(eventsResource).Namespace(namespace).Create(ctx, &unstructured.Unstructured{Object: object}, metav1.CreateOptions{})
	return err
}

// PatchEvent patches the Event with the dynamic client.
func (a *restAPI) PatchEvent(ctx context.Context, namespace, name string, mergePatch []byte) error {
	_, err := a.Dynamic.Resource(eventsResource).Namespace(namespace).Patch(ctx, name, types.MergePatchType, mergePatch, metav1.PatchOptions{})
	return err
}

// Events returns the writer of c's Events, or nil when its API client
// cannot write them (is no EventSink).
func (c *Controller) Events() (*Events, error) {
	sink, ok := c.api.(EventSink)
	if !ok {
		return nil, nil
	}
	return newEvents(apiEvents{sink}, c.stores.readVersion), nil
}
