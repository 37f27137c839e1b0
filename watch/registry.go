package watch

import (
	"github.com/seed-e581d630/k8s_gateway/source"
)

// The running informers, by kind and namespace. With the namespaces option,
// each namespaced kind has one informer per listed namespace, and so has the
// Namespace kind (each reads the Namespace of that name); IngressClasses, and
// every kind without the option, have one for all namespaces, registered
// under the namespace "".

// informerKey names a running informer: its kind and namespace.
type informerKey struct{ Kind, namespace string }

func keyOf(w *watched) informerKey { return informerKey{w.Kind.Name, w.Namespace} }

// register makes the lookups of w's kind read its store.
func (c *Controller) register(w *watched) {
	c.mu.Lock()
	c.informers[keyOf(w)] = w
	c.mu.Unlock()
}

// informerFor returns the running informer of kind that holds the objects of
// namespace: the one of that namespace, else the one of all namespaces; nil
// when no informer reads that namespace.
func (c *Controller) informerFor(kind, namespace string) *watched {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w := c.informers[informerKey{kind, namespace}]; w != nil {
		return w
	}
	return c.informers[informerKey{kind, ""}]
}

// ReadVersion returns the group version at which the informer of kind in
// namespace reads, "" when none runs.
func (c *Controller) ReadVersion(kind, namespace string) string {
	if w := c.informerFor(kind, namespace); w != nil {
		return w.Version.GroupVersion
	}
	return ""
}

// running returns every running informer of kind.
func (c *Controller) running(kind string) []*watched {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ws []*watched
	for k, w := range c.informers {
		if k.Kind == kind {
			ws = append(ws, w)
		}
	}
	return ws
}

// getObject returns the object namespace/name of kind from the informer
// that reads its namespace, or nil.
func (c *Controller) getObject(kind, namespace, name string) (*watched, any) {
	return c.getKey(kind, namespace, namespace+"/"+name)
}

// getNamespace returns the Namespace name from the informer that reads it.
func (c *Controller) getNamespace(name string) any {
	_, obj := c.getKey(source.NamespaceKind.Name, name, name)
	return obj
}

// getKey returns the object of kind with the store key, from the informer
// that reads namespace, or nil.
func (c *Controller) getKey(kind, namespace, key string) (*watched, any) {
	w := c.informerFor(kind, namespace)
	if w == nil {
		return nil, nil
	}
	obj, ok, _ := w.informer.GetStore().GetByKey(key)
	if !ok {
		return nil, nil
	}
	return w, obj
}
