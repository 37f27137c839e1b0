package index

import (
	"slices"

	"github.com/miekg/dns"
)

// OwnersBelow returns the namespaces of the claims the policy admits at name
// and at the names below it, sorted, with "" for the plugin's own records.
// It walks every object: it is for rare callers (dynamic updates deciding
// who may prove control of a name), never for the query path.
func (ix *Index) OwnersBelow(name string) []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var out []string
	ix.eachObject(func(id objectID, wire []byte) {
		namespace := ix.claimOf(id).Namespace
		forWireNames(wire, func(n string) {
			if !dns.IsSubDomain(name, n) || slices.Contains(out, namespace) {
				return
			}
			key := ix.sh.key(id)
			if slices.ContainsFunc(ix.rejections[n], func(r Rejection) bool { return r.Key == key }) {
				return
			}
			out = append(out, namespace)
		})
	})
	slices.Sort(out)
	return out
}
