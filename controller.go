package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// Timing of the controller; variables so that tests can shorten them.
var (
	// startupWait is how long OnStartup waits for the first sync, so that a
	// restart or reload does not answer SERVFAIL while the informers list.
	startupWait = 5 * time.Second
	// reprobeInterval is how often a kind that the cluster does not serve, or
	// that RBAC forbids, is tried again.
	reprobeInterval = 30 * time.Second
	// retryInterval is the first wait after a transient API error.
	retryInterval = time.Second
)

// controller runs the informers of one plugin instance and feeds the index.
type controller struct {
	g       *Gateway
	client  kubernetes.Interface
	sources sourceConfig

	mu       sync.Mutex
	warnings map[string]string // object key → last warnings logged
	stopCh   chan struct{}
	wg       sync.WaitGroup
}

// watched is one informer the controller runs.
type watched struct {
	kind      *kind
	namespace string
	options   func(*metav1.ListOptions)
	key       func(obj metav1.Object) string
	records   func(obj any) result
}

func newController(g *Gateway, client kubernetes.Interface) *controller {
	return &controller{
		g:      g,
		client: client,
		sources: sourceConfig{
			zones:          g.Zones,
			ttl:            g.ttl,
			ingressClasses: g.ingressClasses,
		},
		warnings: map[string]string{},
	}
}

// restConfig returns the client configuration: the kubeconfig when given, else
// the in-cluster configuration, else the default kubeconfig loading rules
// (KUBECONFIG, ~/.kube/config).
func restConfig(kubeconfig, context string) (*rest.Config, error) {
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
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}

// newClient builds the clientset for cfg, speaking protobuf to the API server.
func newClient(cfg *rest.Config) (kubernetes.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.ContentType = "application/vnd.kubernetes.protobuf"
	c.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	return kubernetes.NewForConfig(c)
}

// watches returns the informers the configuration asks for.
func (c *controller) watches() []*watched {
	var ws []*watched
	for _, name := range c.g.resources {
		k := kindByName(name)
		sel := c.g.labelSelectors[name]
		ws = append(ws, &watched{
			kind:    k,
			options: func(o *metav1.ListOptions) { o.LabelSelector = sel },
			key:     func(o metav1.Object) string { return k.name + "/" + o.GetNamespace() + "/" + o.GetName() },
			records: func(obj any) result { return k.records(obj, &c.sources) },
		})
	}
	// The nameserver's own Services publish the NS names and their glue.
	svc := kindByName("Service")
	for _, nsName := range c.g.nameserverServices() {
		namespace, name, _ := strings.Cut(nsName, "/")
		ws = append(ws, &watched{
			kind:      svc,
			namespace: namespace,
			options:   func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name=" + name },
			key:       func(o metav1.Object) string { return "Nameserver/" + o.GetNamespace() + "/" + o.GetName() },
			records:   func(obj any) result { return c.nameserverRecords(obj) },
		})
	}
	return ws
}

// start runs the informers and waits a little for them to sync.
func (c *controller) start() error {
	c.stopCh = make(chan struct{})
	synced := make(chan struct{})
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.run(synced)
	}()
	select {
	case <-synced:
	case <-time.After(startupWait):
		log.Warningf("starting with unsynced Kubernetes API; answering SERVFAIL until the informers have synced")
	}
	return nil
}

// stop stops every informer and waits for their goroutines.
func (c *controller) stop() {
	if c.stopCh == nil {
		return
	}
	close(c.stopCh)
	c.wg.Wait()
	c.stopCh = nil
	c.g.ready.Store(false)
	c.g.index.Close()
}

// run probes every watched kind, starts the informers of those the cluster
// serves and allows, and marks the plugin ready when they have synced.
// Kinds that are not served or are forbidden are retried in the background.
func (c *controller) run(synced chan<- struct{}) {
	var syncs []cache.InformerSynced
	var disabled []*watched
	for _, w := range c.watches() {
		err := c.probe(w)
		switch {
		case err == nil:
			syncs = append(syncs, c.startInformer(w))
		case errors.Is(err, errStopped):
			return
		default:
			log.Warningf("%s disabled: %v; retrying every %s", w.kind.name, err, reprobeInterval)
			disabled = append(disabled, w)
		}
	}
	if !cache.WaitForCacheSync(c.stopCh, syncs...) {
		return
	}
	c.g.index.Flush()
	c.g.ready.Store(true)
	close(synced)
	log.Infof("synced %d kinds for zones %s", len(syncs), strings.Join(c.g.Zones, " "))
	setKindMetrics(c.g, c.watches(), disabled)

	// Try the disabled kinds again from time to time.
	for len(disabled) > 0 {
		select {
		case <-c.stopCh:
			return
		case <-time.After(reprobeInterval):
		}
		var still []*watched
		for _, w := range disabled {
			if err := c.probeOnce(w); err != nil {
				still = append(still, w)
				continue
			}
			log.Infof("%s enabled", w.kind.name)
			c.startInformer(w)
		}
		disabled = still
		setKindMetrics(c.g, c.watches(), disabled)
	}
}

var errStopped = errors.New("stopped")

// probe lists one object of the kind, retrying transient errors until it
// works, the error is permanent (not served, forbidden), or the controller stops.
func (c *controller) probe(w *watched) error {
	wait := retryInterval
	for {
		err := c.probeOnce(w)
		if err == nil || apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsUnauthorized(err) {
			return err
		}
		log.Warningf("listing %s: %v; retrying in %s", w.kind.name, err, wait)
		select {
		case <-c.stopCh:
			return errStopped
		case <-time.After(wait):
		}
		wait = min(2*wait, reprobeInterval)
	}
}

func (c *controller) probeOnce(w *watched) error {
	list, _ := w.kind.listers(c.client, w.namespace)
	opts := metav1.ListOptions{Limit: 1}
	w.options(&opts)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := list(ctx, opts)
	return err
}

// startInformer starts the informer of w and returns its synced function.
func (c *controller) startInformer(w *watched) cache.InformerSynced {
	list, watchFn := w.kind.listers(c.client, w.namespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			w.options(&o)
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			w.options(&o)
			return watchFn(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformerWithOptions(lw, w.kind.object, cache.SharedIndexInformerOptions{})
	_ = inf.SetTransform(w.kind.transform)
	reg, _ := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.update(w, obj) },
		UpdateFunc: func(_, obj any) { c.update(w, obj) },
		DeleteFunc: func(obj any) { c.remove(w, obj) },
	})
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		inf.Run(c.stopCh)
	}()
	return reg.HasSynced
}

// update publishes the records of an added or changed object.
func (c *controller) update(w *watched, obj any) {
	meta, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	key := w.key(meta)
	res := w.records(obj)
	c.logWarnings(key, res.warnings)
	c.g.index.Update(key, res.rrs)
	eventsTotal.WithLabelValues(w.kind.name).Inc()
}

// remove withdraws the records of a deleted object.
func (c *controller) remove(w *watched, obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	meta, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	key := w.key(meta)
	c.logWarnings(key, nil)
	c.g.index.Update(key, nil)
	eventsTotal.WithLabelValues(w.kind.name).Inc()
}

// logWarnings logs what a source found wrong with an object, once per change.
func (c *controller) logWarnings(key string, warnings []string) {
	text := strings.Join(warnings, "; ")
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.warnings[key] == text {
		return
	}
	if text == "" {
		delete(c.warnings, key)
		return
	}
	c.warnings[key] = text
	log.Warningf("%s: %s", key, text)
}
