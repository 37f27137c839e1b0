package acmeupdate

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/seed-e581d630/k8s_gateway/internal/informer"
)

// SecretLabel marks the Secrets holding a tenant's TSIG key (value "true").
// The key is named <secret>.<namespace>., bound to the Secret's namespace
// (or, in the namespace of tenant_secrets, to the one tenantLabel names);
// data "secret" is its base64 secret, data "algorithm" its algorithm
// (default hmac-sha256).
const SecretLabel = "k8s-gateway.dns/tsig-key"

// tenantLabel, on a labelled Secret of the namespace of tenant_secrets (one
// namespace the platform team owns), names the tenant namespace its key acts
// for, and only that one. Anywhere else a Secret's key acts for its own
// namespace: a tenantLabel naming another one gives no key.
const tenantLabel = "k8s-gateway.dns/tenant"

// SecretTenancy says which tenant the key of a Secret acts for.
type SecretTenancy struct {
	// shared is the namespace of tenant_secrets ("" when none).
	shared string
	// tenants are the namespaces shared's keys may act for; any when empty.
	tenants []string
}

// tenantOf returns the namespace the key of Secret u acts for, or why it
// acts for none.
func (st SecretTenancy) tenantOf(u *unstructured.Unstructured) (string, error) {
	ns := u.GetNamespace()
	tenant, labelled := u.GetLabels()[tenantLabel]
	if st.shared == "" || ns != st.shared {
		if labelled && tenant != ns {
			return "", fmt.Errorf("label %s names namespace %q: only a Secret of the tenants' keys' namespace (tenant_secrets) acts for another namespace than its own", tenantLabel, tenant)
		}
		return ns, nil
	}
	switch {
	case !labelled || tenant == "":
		return "", fmt.Errorf("a Secret of the tenants' keys' namespace %s needs the label %s naming the namespace its key acts for", ns, tenantLabel)
	case len(validation.IsDNS1123Label(tenant)) > 0:
		return "", fmt.Errorf("label %s: %q is not a namespace name", tenantLabel, tenant)
	case len(st.tenants) > 0 && !slices.Contains(st.tenants, tenant):
		return "", fmt.Errorf("label %s: namespace %s is not one of the tenants of tenant_secrets (%s)", tenantLabel, tenant, strings.Join(st.tenants, " "))
	}
	return tenant, nil
}

// secretsResource is read with the dynamic client: the plugin's binary links
// neither client-go's clientset nor the types of k8s.io/api.
var secretsResource = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// secretKey returns the key a Secret holds, bound to the tenant st gives
// it, or why it holds none.
func secretKey(u *unstructured.Unstructured, st SecretTenancy) (Key, error) {
	data := func(k string) (string, error) {
		s, _, _ := unstructured.NestedString(u.Object, "data", k)
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return "", fmt.Errorf("data %s is not base64: %v", k, err)
		}
		return string(b), nil
	}
	alg, err := data("algorithm")
	if err != nil {
		return Key{}, err
	}
	if alg == "" {
		alg = "hmac-sha256"
	}
	secret, err := data("secret")
	if err != nil {
		return Key{}, err
	}
	tenant, err := st.tenantOf(u)
	if err != nil {
		return Key{}, err
	}
	ns, name := u.GetNamespace(), u.GetName()
	return NewKey(name+"."+ns+".", alg, secret, tenant, "Secret/"+ns+"/"+name)
}

// secretsTiming are the waits of the Secrets informer's guard; tests shorten them.
var secretsTiming = informer.DefaultTiming

// WatchSecrets keeps kr in step with the labelled Secrets of namespace (""
// for all), their keys bound as st says, until stop closes; it returns once
// the informer has synced. The informer is the plugin's recipe
// (internal/informer): a Secret changed during an API outage is read within
// about a second of the API's return.
func WatchSecrets(client dynamic.Interface, namespace string, st SecretTenancy, kr *Keyring, stop <-chan struct{}) {
	c := client.Resource(secretsResource).Namespace(namespace)
	selector := SecretLabel + "=true"
	inf, _ := informer.New(informer.Config{
		Kind: "Secret", What: "TSIG key Secrets", Object: &unstructured.Unstructured{}, Timing: secretsTiming,
		List:    func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return c.List(ctx, o) },
		Watch:   c.Watch,
		Options: func(o *metav1.ListOptions) { o.LabelSelector = selector },
		Client:  client, Resync: 10 * time.Minute,
	})
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { setSecretKey(kr, st, obj) },
		UpdateFunc: func(_, obj any) { setSecretKey(kr, st, obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if u, ok := obj.(*unstructured.Unstructured); ok {
				kr.Remove("Secret/" + u.GetNamespace() + "/" + u.GetName())
			}
		},
	})
	if err != nil {
		log.Errorf("TSIG keys from Secrets: %v", err)
		return
	}
	go inf.Run(stop)
	cache.WaitForCacheSync(stop, reg.HasSynced) // the handler has seen every Secret listed
}

// setSecretKey puts the key of a Secret in kr, or logs why there is none.
func setSecretKey(kr *Keyring, st SecretTenancy, obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	src := "Secret/" + u.GetNamespace() + "/" + u.GetName()
	k, err := secretKey(u, st)
	if err == nil {
		err = kr.Set(src, k)
	}
	if err != nil {
		kr.Remove(src)
		log.Warningf("%s: no TSIG key: %v", src, err)
		return
	}
	log.Infof("%s: TSIG key %s for namespace %s", src, k.Name, k.Namespace)
}
