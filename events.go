package gateway

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

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
type events struct{ writer *eventWriter }

func newEvents(sink eventSink) *events { return &events{writer: newEventWriter(sink)} }

// rejected emits DNSNameRejected on the object whose claim was rejected. The
// owner of a name is another tenant: the Event does not name it.
func (e *events) rejected(r index.Rejection) {
	ref := objectReference(r.Key)
	if ref == nil {
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
	e.writer.emit(*ref, corev1.EventTypeWarning, eventNameRejected, fmt.Sprintf("DNS name %s (zone %s) not published: %s", strings.TrimSuffix(r.Name, "."), r.Zone, why))
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
		if ref := objectReference(key); ref != nil {
			e.writer.emit(*ref, corev1.EventTypeWarning, eventNameConflict, msg)
		}
	}
}

func (e *events) stop() { e.writer.stop() }

// objectReference turns an index key, "Kind/namespace/name", into a reference
// to the object, or nil for keys that name no object of a kind the plugin reads.
func objectReference(key string) *corev1.ObjectReference {
	parts := strings.SplitN(key, "/", 3)
	if len(parts) != 3 || parts[1] == "" {
		return nil
	}
	for _, k := range kinds {
		if k.name == parts[0] {
			return &corev1.ObjectReference{APIVersion: k.groupVersion, Kind: k.name, Namespace: parts[1], Name: parts[2]}
		}
	}
	if parts[0] == gatewayKind.name {
		return &corev1.ObjectReference{APIVersion: gatewayKind.groupVersion, Kind: gatewayKind.name, Namespace: parts[1], Name: parts[2]}
	}
	return nil
}

// restEventSink writes Events with the core group's REST client.
type restEventSink struct{ rc *rest.RESTClient }

func (s restEventSink) create(ctx context.Context, ev *corev1.Event) error {
	return s.rc.Post().Namespace(ev.Namespace).Resource("events").Body(ev).Do(ctx).Error()
}

func (s restEventSink) patch(ctx context.Context, namespace, name string, mergePatch []byte) error {
	return s.rc.Patch(types.MergePatchType).Namespace(namespace).Resource("events").Name(name).Body(mergePatch).Do(ctx).Error()
}

// eventSinker is an apiClient that can write Events.
type eventSinker interface {
	eventSink() (eventSink, error)
}

func (a *restAPI) eventSink() (eventSink, error) {
	rc, ok := a.groups["v1"]
	if !ok {
		return nil, fmt.Errorf("no client for the core API group")
	}
	return restEventSink{rc.rest}, nil
}
