package fleet

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/seed-e581d630/k8s_gateway/watch"
)

// Cluster API discovery: the plugin watches the cluster.x-k8s.io Clusters of
// the cluster it reads Clusters from (the management cluster), with the
// kubeconfig Secret that Cluster API writes for each (<cluster>-kubeconfig,
// key value), and reads each workload cluster whose kubeconfig works, under
// its own subdomain <cluster>.<zone>. A Cluster deleted takes its names
// along; a Secret rotated reconnects.

// clusterAPIGroup is the API group of Cluster API's Cluster, and
// clusterAPIVersions its versions, newest first.
const clusterAPIGroup = "cluster.x-k8s.io"

var clusterAPIVersions = []string{"v1beta2", "v1beta1"}

// clusterNameLabel is the label Cluster API puts on a cluster's Secrets.
const clusterNameLabel = "cluster.x-k8s.io/cluster-name"

var secretsResource = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// Discovery runs the Cluster API watch and the clusters it finds.
type Discovery struct {
	cfg DiscoveryConfig

	mu       sync.Mutex
	members  map[string]*discovered // by "namespace/name" of the Cluster
	warned   map[string]string      // Cluster → last problem logged
	clusters stores                 // nil until the informers run
	secrets  stores
	stopped  bool

	stopCh   chan struct{}
	wg       sync.WaitGroup
	syncedCh chan struct{} // closed once the Clusters and Secrets are listed
}

// discovered is one workload cluster the plugin reads.
type discovered struct {
	cl     *Cluster
	digest [32]byte // of the kubeconfig it reads with
	base   int32    // its priority without the Cluster's annotation: the block's
	// baseSteer: its weight and location without the Cluster's annotations.
	baseSteer steering
}

// DiscoveryConfig is what discovery reads Clusters with, and what it does
// with each.
type DiscoveryConfig struct {
	Dynamic    dynamic.Interface
	Served     func(ctx context.Context, groupVersion string) ([]string, error)
	APIOf      func(kubeconfig []byte) (watch.API, error)
	Namespaces []string // read Clusters in these namespaces; all when empty

	Reprobe     time.Duration // how often a management cluster without Clusters is asked again
	ClusterWait time.Duration // how long readiness waits for the clusters found at start
	Health      HealthTiming
	Guard       watch.GuardTiming // the waits of the Cluster and Secret informers' guards
	// Members is the fleet that the clusters found join and leave.
	Members *Fleet
	// Join makes the cluster of the Cluster namespace/name, read with api;
	// an error says why it is not read.
	Join func(namespace, name string, api watch.API) (*Cluster, error)
}

func NewDiscovery(cfg DiscoveryConfig) *Discovery {
	return &Discovery{
		cfg:     cfg,
		members: map[string]*discovered{}, warned: map[string]string{},
		syncedCh: make(chan struct{}),
	}
}

// Synced is closed once the Clusters and their Secrets have been listed.
func (d *Discovery) Synced() <-chan struct{} { return d.syncedCh }

// Start finds the Cluster version the management cluster serves, retrying
// until it serves one, and starts the informers.
func (d *Discovery) Start() {
	d.stopCh = make(chan struct{})
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		version := d.clusterVersion()
		if version == "" {
			return // stopped
		}
		d.run(schema.GroupVersionResource{Group: clusterAPIGroup, Version: version, Resource: "clusters"})
	}()
}

// clusterVersion returns the newest Cluster version served, "" once stopped.
func (d *Discovery) clusterVersion() string {
	logged := false
	for {
		for _, v := range clusterAPIVersions {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			names, err := d.cfg.Served(ctx, clusterAPIGroup+"/"+v)
			cancel()
			if err == nil && slices.Contains(names, "clusters") {
				log.Infof("clusterapi: reading Clusters at %s/%s", clusterAPIGroup, v)
				return v
			}
		}
		if !logged {
			log.Warningf("clusterapi: the management cluster serves no Cluster of %s at %s (Cluster API not installed?); trying again every %s",
				clusterAPIGroup, strings.Join(clusterAPIVersions, ", "), d.cfg.Reprobe)
			logged = true
		}
		select {
		case <-d.stopCh:
			return ""
		case <-time.After(d.cfg.Reprobe):
		}
	}
}

// run watches Clusters and Secrets until stopped.
func (d *Discovery) run(clusters schema.GroupVersionResource) {
	namespaces := d.cfg.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	var syncs []cache.InformerSynced
	var clusterStores, secretStores stores
	for _, ns := range namespaces {
		ci := dynamicInformer(d.cfg.Dynamic, "Cluster", clusters, ns, "", d.cfg.Guard)
		si := dynamicInformer(d.cfg.Dynamic, "Secret", secretsResource, ns, clusterNameLabel, d.cfg.Guard)
		ci.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { d.reconcileObject(obj, "") },
			UpdateFunc: func(_, obj any) { d.reconcileObject(obj, "") },
			DeleteFunc: func(obj any) { d.reconcileObject(obj, "") },
		})
		si.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { d.reconcileObject(obj, "-kubeconfig") },
			UpdateFunc: func(_, obj any) { d.reconcileObject(obj, "-kubeconfig") },
			DeleteFunc: func(obj any) { d.reconcileObject(obj, "-kubeconfig") },
		})
		clusterStores = append(clusterStores, ci.GetStore())
		secretStores = append(secretStores, si.GetStore())
		syncs = append(syncs, ci.HasSynced, si.HasSynced)
		go ci.Run(d.stopCh)
		go si.Run(d.stopCh)
	}
	d.mu.Lock()
	d.clusters, d.secrets = clusterStores, secretStores
	d.mu.Unlock()
	if cache.WaitForCacheSync(d.stopCh, syncs...) {
		// Events that came before the stores were set are seen again.
		d.reconcileAll()
		d.waitMembers()
		close(d.syncedCh)
	}
	<-d.stopCh
}

// waitMembers waits until the workload clusters read so far have synced, or
// clusterWait has passed, so that a restarted plugin does not become ready
// and answer NXDOMAIN for their names while they list.
func (d *Discovery) waitMembers() {
	d.mu.Lock()
	var pending []<-chan struct{}
	for _, m := range d.members {
		pending = append(pending, m.cl.Controller.Synced())
	}
	d.mu.Unlock()
	deadline := time.NewTimer(d.cfg.ClusterWait)
	defer deadline.Stop()
	for _, ch := range pending {
		select {
		case <-ch:
		case <-deadline.C:
			return
		case <-d.stopCh:
			return
		}
	}
}

// reconcileObject reconciles the Cluster an object is about: a Cluster, or
// with suffix, its Secret <cluster><suffix>.
func (d *Discovery) reconcileObject(obj any, suffix string) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	name, ok := strings.CutSuffix(u.GetName(), suffix)
	if !ok {
		return // another Secret of the cluster
	}
	d.reconcile(u.GetNamespace(), name)
}

// reconcileAll reconciles every Cluster, and withdraws those that are gone.
func (d *Discovery) reconcileAll() {
	d.mu.Lock()
	keys := map[string]bool{}
	for k := range d.members {
		keys[k] = true
	}
	for _, st := range d.clusters {
		for _, k := range st.ListKeys() {
			keys[k] = true
		}
	}
	d.mu.Unlock()
	for k := range keys {
		ns, name, _ := strings.Cut(k, "/")
		d.reconcile(ns, name)
	}
}

// reconcile makes the plugin read the Cluster ns/name as its objects say:
// with a working kubeconfig Secret while the Cluster exists, not at all once
// it is deleted.
func (d *Discovery) reconcile(ns, name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.clusters == nil || d.stopped {
		return // not listed yet (reconcileAll follows), or stopped
	}
	key := ns + "/" + name
	obj, ok := d.clusters.get(key)
	if !ok || obj.GetDeletionTimestamp() != nil {
		d.withdraw(key)
		return
	}
	secret, ok := d.secrets.get(key + "-kubeconfig")
	if !ok {
		d.warn(key, "waiting for its kubeconfig Secret "+key+"-kubeconfig")
		return
	}
	value, problem := secretValue(secret)
	if problem != "" {
		d.warn(key, "kubeconfig Secret "+key+"-kubeconfig: "+problem)
		return
	}
	digest := sha256.Sum256(value)
	old := d.members[key]
	priority, annotated := d.priorityOf(key, obj)
	if old != nil && !annotated {
		priority = old.base
	}
	own := d.steeringOf(key, obj)
	if old != nil && old.digest == digest && old.cl.Controller.Config().Priority == priority && steerOf(old.cl.Controller.Config()) == own.over(old.baseSteer) {
		return
	}
	api, err := d.cfg.APIOf(value)
	if err != nil {
		d.warn(key, "kubeconfig Secret "+key+"-kubeconfig: "+err.Error()+"; not reading the cluster with it")
		return
	}
	delete(d.warned, key)
	if old != nil {
		d.reconnect(key, old, api, digest, priority, own.over(old.baseSteer))
		return
	}
	cl, err := d.cfg.Join(ns, name, api)
	if err != nil {
		d.warn(key, err.Error())
		return
	}
	base, baseSteer := cl.Controller.Config().Priority, steerOf(cl.Controller.Config())
	if annotated && priority != base || own.over(baseSteer) != baseSteer {
		cfg := cl.Controller.Config()
		cfg.Priority = priority
		own.over(baseSteer).set(&cfg)
		cl.Controller = watch.New(cfg, api, cl.sink)
	}
	d.cfg.Members.Add(cl)
	if err := cl.Start(d.cfg.Health); err != nil {
		log.Errorf("clusterapi: Cluster %s: %v", key, err)
	}
	d.members[key] = &discovered{cl: cl, digest: digest, base: base, baseSteer: baseSteer}
	log.Infof("clusterapi: Cluster %s: reading it, under %s", key, strings.Join(cl.Controller.Config().Sources.Zones, " "))
}

// reconnect replaces the controller of a member whose kubeconfig changed. The
// records stay while the new controller lists; then those of objects that are
// gone meanwhile are removed.
func (d *Discovery) reconnect(key string, m *discovered, api watch.API, digest [32]byte, priority int32, st steering) {
	m.cl.Stop()
	m.cl.sink.mark()
	cfg := m.cl.Controller.Config()
	cfg.Priority = priority
	st.set(&cfg)
	m.cl.Controller = watch.New(cfg, api, m.cl.sink)
	if err := m.cl.Start(d.cfg.Health); err != nil {
		log.Errorf("clusterapi: Cluster %s: %v", key, err)
	}
	if m.digest == digest {
		log.Infof("clusterapi: Cluster %s: its priority (%d), weight or location changed; reconnected", key, priority)
	} else {
		log.Infof("clusterapi: Cluster %s: its kubeconfig Secret changed; reconnected", key)
	}
	m.digest = digest
	ctrl, sink := m.cl.Controller, m.cl.sink
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		select {
		case <-ctrl.Synced():
			sink.sweep()
		case <-d.stopCh:
		}
	}()
}

// withdraw stops reading the Cluster key and removes its names.
func (d *Discovery) withdraw(key string) {
	delete(d.warned, key)
	m := d.members[key]
	if m == nil {
		return
	}
	delete(d.members, key)
	d.cfg.Members.remove(m.cl.Name)
	m.cl.Stop()
	m.cl.sink.withdraw()
	log.Infof("clusterapi: Cluster %s is gone: its names are withdrawn", key)
}

// warn logs a problem with a Cluster once, until it changes.
func (d *Discovery) warn(key, problem string) {
	if d.warned[key] == problem {
		return
	}
	d.warned[key] = problem
	log.Warningf("clusterapi: Cluster %s: %s", key, problem)
}

// Stop stops the watch and every cluster it started; their names go.
func (d *Discovery) Stop() {
	if d.stopCh == nil {
		return
	}
	d.mu.Lock()
	d.stopped = true
	d.mu.Unlock()
	close(d.stopCh)
	d.wg.Wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	for key, m := range d.members {
		d.cfg.Members.remove(m.cl.Name)
		m.cl.Stop()
		delete(d.members, key)
	}
	d.stopCh = nil
}

// priority is the priority the member is read with.
func (m *discovered) priority() int32 { return m.cl.Controller.Config().Priority }

// priorityAnnotation on a Cluster API Cluster sets the priority of the
// workload cluster (see the README's "Priorities and failover"), instead of
// the k8s_gateway block's.
const priorityAnnotation = "k8s-gateway.dns/priority"

// priorityOf returns the priority of the Cluster's annotation, if it has a
// valid one; an invalid one is logged once and ignored.
func (d *Discovery) priorityOf(key string, obj metav1.Object) (int32, bool) {
	v, ok := obj.GetAnnotations()[priorityAnnotation]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil || n < 0 || n > 1000000 {
		d.warn(key, fmt.Sprintf("annotation %s=%q is not an integer from 0 to 1000000; ignored", priorityAnnotation, v))
		return 0, false
	}
	return int32(n), true
}
