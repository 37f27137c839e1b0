package acmeupdate

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// SecretLabel marks the Secrets holding a tenant's TSIG key (value "true").
// The key is named <secret>.<namespace>., bound to the Secret's namespace;
// data "secret" is its base64 secret, data "algorithm" its algorithm
// (default hmac-sha256).
const SecretLabel = "k8s-gateway.dns/tsig-key"

// SecretKey returns the key a Secret holds, or why it holds none.
func SecretKey(s *corev1.Secret) (Key, error) {
	alg := string(s.Data["algorithm"])
	if alg == "" {
		alg = "hmac-sha256"
	}
	return NewKey(s.Name+"."+s.Namespace+".", alg, string(s.Data["secret"]), s.Namespace, "Secret/"+s.Namespace+"/"+s.Name)
}

// WatchSecrets keeps kr in step with the labelled Secrets of namespace (""
// for all) until stop closes; it returns once the informer has synced.
func WatchSecrets(client kubernetes.Interface, namespace string, kr *Keyring, stop <-chan struct{}) {
	f := informers.NewSharedInformerFactoryWithOptions(client, 10*time.Minute,
		informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = SecretLabel + "=true" }))
	inf := f.Core().V1().Secrets().Informer()
	set := func(obj any) {
		s, ok := obj.(*corev1.Secret)
		if !ok {
			return
		}
		src := "Secret/" + s.Namespace + "/" + s.Name
		k, err := SecretKey(s)
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
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if s, ok := obj.(*corev1.Secret); ok {
				kr.Remove("Secret/" + s.Namespace + "/" + s.Name)
			}
		},
	})
	if err != nil {
		log.Errorf("TSIG keys from Secrets: %v", err)
		return
	}
	f.Start(stop)
	cache.WaitForCacheSync(stop, reg.HasSynced) // the handler has seen every Secret listed
}
