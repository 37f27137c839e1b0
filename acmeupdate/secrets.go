package acmeupdate

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/seed-e581d630/k8s_gateway/internal/informer"
)

// SecretLabel marks the Secrets holding a tenant's TSIG key (value "true").
// The key is named <secret>.<namespace>., bound to the Secret's namespace;
// data "secret" is its base64 secret, data "algorithm" its algorithm
// (default hmac-sha256).
const SecretLabel = "k8s-gateway.dns/tsig-key"

// secretsResource is read with the dynamic client: the plugin's binary links
// neither client-go's clientset nor the types of k8s.io/api.
var secretsResource = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// SecretKey returns the key a Secret holds, or why it holds none.
func SecretKey(u *unstructured.Unstructured) (Key, error) {
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
	ns, name := u.GetNamespace(), u.GetName()
	return NewKey(name+"."+ns+".", alg, secret, ns, "Secret/"+ns+"/"+name)
}

// secretsTiming are the waits of the Secrets informer's guard; tests shorten them.
var secretsTiming = informer.DefaultTiming

// WatchSecrets keeps kr in step with the labelled Secrets of namespace (""
// for all) until stop closes; it returns once the informer has synced. The
// informer is the plugin's recipe (internal/informer): a Secret changed
// during an API outage is read within about a second of the API's return.
func WatchSecrets(client dynamic.Interface, namespace string, kr *Keyring, stop <-chan struct{}) {
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
		AddFunc:    func(obj any) { setSecretKey(kr, obj) },
		UpdateFunc: func(_, obj any) { setSecretKey(kr, obj) },
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
func setSecretKey(kr *Keyring, obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	src := "Secret/" + u.GetNamespace() + "/" + u.GetName()
	k, err := SecretKey(u)
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
