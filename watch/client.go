package watch

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/seed-e581d630/k8s_gateway/source"
)

// API lists and watches the kinds the plugin reads. restAPI implements
// it for a real API server; the unit tests wrap client-go's fake clientset.
type API interface {
	// Reads reports whether the client can list and watch kind k.
	Reads(k *source.Kind) bool
	// ListWatch returns the list and watch calls of kind k in namespace, or
	// in every namespace when it is empty; for a byName kind, of the one
	// object named namespace (see namedListWatch).
	ListWatch(k *source.Kind, namespace string) (listFunc, watchFunc)
	// ServerGroups returns the API groups the server serves.
	ServerGroups(ctx context.Context) (*metav1.APIGroupList, error)
	// ServedResources returns the resources the server serves at a group
	// version, "group/version" or "v1"; none when it does not serve it.
	ServedResources(ctx context.Context, groupVersion string) ([]string, error)
}

// groupSchemes know only the kinds the plugin reads, one scheme per group
// version, each made from the kinds' rows (source.AllKinds): what the
// informers keep, their own types for Services and Ingresses, the metadata
// alone for Namespaces and IngressClasses. Using them instead of client-go's
// clientset keeps every other API group out of the binary: about half of its
// size and of the process's resident memory. A scheme per group version
// lets one Go type stand for a kind at two versions (XListenerSet and
// ListenerSet). Kinds read as unstructured objects need none.
var groupSchemes = map[string]*groupScheme{}

// groupScheme decodes the objects of one group version.
type groupScheme struct {
	scheme   *runtime.Scheme
	params   runtime.ParameterCodec
	codecs   serializer.CodecFactory
	protobuf bool // the API server serves its kinds as protobuf
}

func init() {
	for _, k := range source.AllKinds() {
		for _, v := range k.Versions() {
			if v.Dynamic {
				continue
			}
			gv, err := schema.ParseGroupVersion(v.GroupVersion)
			utilruntime.Must(err)
			gs := groupSchemes[v.GroupVersion]
			if gs == nil {
				gs = &groupScheme{scheme: runtime.NewScheme(), protobuf: v.Protobuf}
				metav1.AddToGroupVersion(gs.scheme, gv)
				groupSchemes[v.GroupVersion] = gs
			}
			gs.scheme.AddKnownTypeWithName(gv.WithKind(v.KindName()), v.Object.DeepCopyObject())
			gs.scheme.AddKnownTypeWithName(gv.WithKind(v.KindName()+"List"), v.List.DeepCopyObject())
		}
	}
	for _, gs := range groupSchemes {
		gs.params = runtime.NewParameterCodec(gs.scheme)
		gs.codecs = serializer.NewCodecFactory(gs.scheme)
	}
}

// RestAPI reads the API server with one REST client per group version.
type restAPI struct {
	groups   map[string]groupClient // by group version, "v1" for the core group
	Dynamic  dynamic.Interface      // DNSEndpoints, whose types the plugin does not import
	shareKey string                 // the cluster and credentials, for shared informers
}

// ShareKey implements Sharer: controllers whose configurations read the
// same cluster with the same credentials share their informers.
func (a *restAPI) ShareKey() string { return a.shareKey }

// groupClient reads one group version.
type groupClient struct {
	rest   *rest.RESTClient
	params runtime.ParameterCodec
}

// NewRestAPI returns the clients for cfg: a REST client per group version
// of the kinds' rows, protobuf for built-in kinds, JSON for CRDs; and a
// dynamic client for the kinds read as unstructured objects.
func NewRestAPI(cfg *rest.Config) (*restAPI, error) {
	api := &restAPI{groups: map[string]groupClient{}, shareKey: shareKeyOf(cfg)}
	for groupVersion, gs := range groupSchemes {
		gv, err := schema.ParseGroupVersion(groupVersion)
		if err != nil {
			return nil, err
		}
		c := rest.CopyConfig(cfg)
		c.APIPath = "/apis"
		if gv.Group == "" {
			c.APIPath = "/api"
		}
		c.GroupVersion = &gv
		c.NegotiatedSerializer = gs.codecs.WithoutConversion()
		if gs.protobuf {
			c.ContentType = runtime.ContentTypeProtobuf
			c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
		} else {
			c.ContentType = runtime.ContentTypeJSON
		}
		rc, err := rest.RESTClientFor(c)
		if err != nil {
			return nil, err
		}
		api.groups[groupVersion] = groupClient{rest: rc, params: gs.params}
	}
	var err error
	if api.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, err
	}
	return api, nil
}

func (a *restAPI) Reads(k *source.Kind) bool {
	_, ok := a.groups[k.GroupVersion]
	return ok || k.Dynamic
}

func (a *restAPI) ListWatch(k *source.Kind, namespace string) (listFunc, watchFunc) {
	if k.Dynamic {
		gv, _ := schema.ParseGroupVersion(k.GroupVersion)
		rc := a.Dynamic.Resource(gv.WithResource(k.Resource)).Namespace(namespace)
		return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return rc.List(ctx, o) }, rc.Watch
	}
	gc := a.groups[k.GroupVersion]
	if k.ByName && namespace != "" {
		return namedListWatch(gc, k, namespace)
	}
	request := func(o *metav1.ListOptions) *rest.Request {
		r := gc.rest.Get().Namespace(namespace).Resource(k.Resource).VersionedParams(o, gc.params)
		if o.TimeoutSeconds != nil {
			r = r.Timeout(time.Duration(*o.TimeoutSeconds) * time.Second)
		}
		return r
	}
	list := func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		out := newList(k)
		return out, request(&o).Do(ctx).Into(out)
	}
	watch := func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		o.Watch = true
		return request(&o).Watch(ctx)
	}
	return list, watch
}

func (a *restAPI) ServerGroups(ctx context.Context) (*metav1.APIGroupList, error) {
	body, err := a.groups["v1"].rest.Get().AbsPath("/apis").SetHeader("Accept", runtime.ContentTypeJSON).Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	groups := &metav1.APIGroupList{}
	if err := json.Unmarshal(body, groups); err != nil {
		return nil, fmt.Errorf("decoding /apis: %w", err)
	}
	return groups, nil
}

func (a *restAPI) ServedResources(ctx context.Context, groupVersion string) ([]string, error) {
	path := "/apis/" + groupVersion
	if !strings.Contains(groupVersion, "/") {
		path = "/api/" + groupVersion
	}
	body, err := a.groups["v1"].rest.Get().AbsPath(path).SetHeader("Accept", runtime.ContentTypeJSON).Do(ctx).Raw()
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	list := &metav1.APIResourceList{}
	if err := json.Unmarshal(body, list); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	names := make([]string, 0, len(list.APIResources))
	for _, r := range list.APIResources {
		names = append(names, r.Name)
	}
	return names, nil
}

// newList returns an empty list of kind k's objects.
func newList(k *source.Kind) runtime.Object {
	if k.Dynamic {
		return &unstructured.UnstructuredList{}
	}
	return k.List.DeepCopyObject()
}

// RestConfig returns the client configuration: the kubeconfig when given, else
// the in-cluster configuration, else the default kubeconfig loading rules
// (KUBECONFIG, ~/.kube/config).
func RestConfig(kubeconfig, context string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}
		overrides := &clientcmd.ConfigOverrides{CurrentContext: context}
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	} else if cfg, err = rest.InClusterConfig(); err != nil {
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig()
		if err != nil {
			err = fmt.Errorf("not running in a cluster and no kubeconfig found: %w", err)
		}
	}
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "k8s_gateway"
	DefaultClientLimits.Apply(cfg)
	return cfg, nil
}

// ClientLimits are an API client's rate limits: client-go's QPS and Burst
// (the apiserver_qps and apiserver_burst options). Zero keeps what is set.
type ClientLimits struct {
	QPS   float32
	Burst int
}

// DefaultClientLimits are the limits of every API client unless configured.
var DefaultClientLimits = ClientLimits{QPS: 50, Burst: 100}

// Apply sets cfg's limits to l's, where l sets them.
func (l ClientLimits) Apply(cfg *rest.Config) {
	if l.QPS > 0 {
		cfg.QPS = l.QPS
	}
	if l.Burst > 0 {
		cfg.Burst = l.Burst
	}
}
