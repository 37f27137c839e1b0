package watch

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// claimOf returns who claims the records of an object: its namespace, in the
// order of creation. The nameservers' own Services (nameservers holds their
// "namespace/name") are the plugin's, under either informer.
func claimOf(w *watched, meta metav1.Object, nameservers []string) index.Claim {
	ns := meta.GetNamespace()
	if w.Nameserver || w.Kind.Name == "Service" && slices.Contains(nameservers, ns+"/"+meta.GetName()) {
		return index.Claim{}
	}
	if ns == "" {
		// Cluster-scoped objects still belong to a tenant, one that no namespace can be.
		ns = "/"
	}
	return index.Claim{Namespace: ns, Created: meta.GetCreationTimestamp().UnixNano()}
}

// delegate applies a Namespace's domains annotation to the index.
func (c *Controller) delegate(meta metav1.Object, deleted bool) {
	if c.cfg.Ownership != index.Delegated {
		return
	}
	key := "Namespace/" + meta.GetName()
	if deleted {
		c.logWarnings(key, nil)
		c.out.SetDomains(meta.GetName(), nil)
		return
	}
	domains, warnings := source.NamespaceDomains(meta)
	c.logWarnings(key, warnings)
	c.out.SetDomains(meta.GetName(), domains)
}

// MayPublish reports whether objects of namespace may publish at name
// (source.Context's MayPublish): under the delegated policy, only at or
// below the domains the Corefile or its Namespace's annotation gives it.
func (c *Controller) MayPublish(namespace, name string) bool {
	return c.stores.MayPublish(namespace, name)
}
