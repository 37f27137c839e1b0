package acmeupdate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// The marks of the DNSEndpoints the plugin writes.
const (
	// WrittenByLabel marks an object as the plugin's: it changes and deletes
	// no other.
	WrittenByLabel = "k8s-gateway.dns/written-by"
	writtenByValue = "acmeupdate"
	// NameAnnotation holds the owner name the object is for.
	NameAnnotation = "k8s-gateway.dns/challenge"
	// KeyAnnotation holds the name of the key of the last update.
	KeyAnnotation = "k8s-gateway.dns/tsig-key"
	// ExpiresAnnotation holds the time (RFC 3339) the janitor deletes the object after.
	ExpiresAnnotation = "k8s-gateway.dns/expires"
)

// dnsEndpoints is external-dns's DNSEndpoint resource.
var dnsEndpoints = schema.GroupVersionResource{Group: "externaldns.k8s.io", Version: "v1alpha1", Resource: "dnsendpoints"}

// DNSEndpoints is the Store writing one DNSEndpoint per owner name in the
// key's namespace, named acme-challenge-<hash of the name>.
type DNSEndpoints struct {
	Client dynamic.Interface
	// Expire is how long a challenge lives after its last update.
	Expire time.Duration
	Now    func() time.Time
}

// ObjectName returns the name of the DNSEndpoint of an owner name.
func ObjectName(name string) string {
	h := sha256.Sum256([]byte(name))
	return "acme-challenge-" + hex.EncodeToString(h[:8])
}

// Edit implements Store, retrying on conflicts with other writers.
func (s *DNSEndpoints) Edit(ctx context.Context, namespace, name, keyName string, edit EditFunc) (Change, error) {
	var change Change
	var err error
	for range 5 {
		if change, err = s.edit(ctx, namespace, name, keyName, edit); !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
			return change, err
		}
	}
	return Change{}, err
}

// edit makes one attempt; the change is what the write did (none when it failed).
func (s *DNSEndpoints) edit(ctx context.Context, namespace, name, keyName string, edit EditFunc) (Change, error) {
	c := s.Client.Resource(dnsEndpoints).Namespace(namespace)
	obj, err := c.Get(ctx, ObjectName(name), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		obj = nil
	case err != nil:
		return Change{}, err
	case obj.GetLabels()[WrittenByLabel] != writtenByValue || obj.GetAnnotations()[NameAnnotation] != name:
		return Change{}, fmt.Errorf("DNSEndpoint %s/%s exists and is not the plugin's challenge for %s", namespace, obj.GetName(), name)
	}
	before, ttl := endpointValues(obj)
	values, ttl, err := edit(before, ttl)
	if err != nil {
		return Change{}, err
	}
	change := changeOf(before, values, ttl)
	if len(values) == 0 {
		if obj == nil {
			return change, nil
		}
		err := c.Delete(ctx, obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr(obj.GetUID()), ResourceVersion: ptr(obj.GetResourceVersion())}})
		if apierrors.IsNotFound(err) {
			return Change{}, nil // gone meanwhile: someone else removed the values
		}
		if err != nil {
			return Change{}, err
		}
		return change, nil
	}
	next := s.object(namespace, name, keyName, values, ttl)
	if obj == nil {
		_, err = c.Create(ctx, next, metav1.CreateOptions{})
	} else {
		next.SetResourceVersion(obj.GetResourceVersion())
		_, err = c.Update(ctx, next, metav1.UpdateOptions{})
	}
	if err != nil {
		return Change{}, err
	}
	return change, nil
}

func ptr[T any](v T) *T { return &v }

// object returns the DNSEndpoint of name with values.
func (s *DNSEndpoints) object(namespace, name, keyName string, values []string, ttl uint32) *unstructured.Unstructured {
	targets := make([]any, len(values))
	for i, v := range values {
		targets[i] = v
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "externaldns.k8s.io/v1alpha1",
		"kind":       "DNSEndpoint",
		"spec": map[string]any{"endpoints": []any{map[string]any{
			"dnsName":    strings.TrimSuffix(name, "."),
			"recordType": "TXT",
			"targets":    targets,
			"recordTTL":  int64(ttl),
		}}},
	}}
	u.SetNamespace(namespace)
	u.SetName(ObjectName(name))
	u.SetLabels(map[string]string{WrittenByLabel: writtenByValue})
	u.SetAnnotations(map[string]string{
		NameAnnotation:    name,
		KeyAnnotation:     keyName,
		ExpiresAnnotation: s.now().Add(s.Expire).UTC().Format(time.RFC3339),
	})
	return u
}

func (s *DNSEndpoints) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// endpointValues returns the TXT targets and TTL of the plugin's object.
func endpointValues(obj *unstructured.Unstructured) ([]string, uint32) {
	if obj == nil {
		return nil, 0
	}
	eps, _, _ := unstructured.NestedSlice(obj.Object, "spec", "endpoints")
	if len(eps) == 0 {
		return nil, 0
	}
	ep, _ := eps[0].(map[string]any)
	targets, _, _ := unstructured.NestedStringSlice(ep, "targets")
	ttl, _, _ := unstructured.NestedInt64(ep, "recordTTL")
	return targets, uint32(min(max(ttl, 0), 1<<31-1))
}

// ExpireNow deletes the plugin's DNSEndpoints whose time is up in namespace
// ("" for all), and returns how many.
func (s *DNSEndpoints) ExpireNow(ctx context.Context, namespace string) (int, error) {
	c := s.Client.Resource(dnsEndpoints).Namespace(namespace)
	list, err := c.List(ctx, metav1.ListOptions{LabelSelector: WrittenByLabel + "=" + writtenByValue})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, obj := range list.Items {
		t, err := time.Parse(time.RFC3339, obj.GetAnnotations()[ExpiresAnnotation])
		if err == nil && s.now().Before(t) {
			continue
		}
		err = s.Client.Resource(dnsEndpoints).Namespace(obj.GetNamespace()).Delete(ctx, obj.GetName(),
			metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr(obj.GetUID()), ResourceVersion: ptr(obj.GetResourceVersion())}})
		if err == nil {
			n++
			log.Infof("expired challenge DNSEndpoint %s/%s (%s)", obj.GetNamespace(), obj.GetName(), obj.GetAnnotations()[NameAnnotation])
		} else if !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return n, err
		}
	}
	return n, nil
}

// Janitor calls ExpireNow in each namespace ("" for all) every interval
// until ctx ends.
func (s *DNSEndpoints) Janitor(ctx context.Context, namespaces []string, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		for _, ns := range namespaces {
			if _, err := s.ExpireNow(ctx, ns); err != nil && ctx.Err() == nil {
				log.Warningf("challenge janitor (namespace %q): %v", ns, err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
