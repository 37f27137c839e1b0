package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/yaml"
)

// The fork's chart defaults that change answers, written out when its values
// do not set them: this chart's defaults differ (TTL 60, every kind, TCP too).
var forkAnswerDefaults = map[string]any{
	"ttl":              300,
	"watchedResources": []any{"Ingress", "Service"},
}

// forkDefaultPlugins are the plugins the fork's chart puts beside
// k8s_gateway by default (names only): values that list just these keep
// this chart's own list (the same plugins, without forward, whose server
// block here is the zones only).
var forkDefaultPlugins = []string{"log", "errors", "health", "ready", "prometheus", "forward", "loop", "reload", "loadbalance"}

// copied are the values that mean the same in both charts.
var copied = []string{
	"domain", "apex", "secondary", "ttl", "imagePullSecrets", "customLabels", "podAnnotations",
	"resources", "nodeSelector", "tolerations", "topologySpreadConstraints", "affinity",
	"replicaCount", "priorityClassName", "podSecurityContext", "securityContext",
	"extraVolumes", "extraVolumeMounts", "nameOverride", "fullnameOverride",
}

// The sub-values of the maps that are carried over key by key.
var (
	serviceKeys = []string{"type", "port", "annotations", "labels", "nodePort", "loadBalancerIP",
		"loadBalancerClass", "clusterIP", "externalTrafficPolicy", "externalIPs", "ipFamilyPolicy",
		"ipFamilies", "useTcp"}
	serviceAccountKeys = []string{"create", "name", "annotations"}
	filterKeys         = []string{"ingressClasses", "gatewayClasses", "serviceLabelSelectors"}
	fallthroughKeys    = []string{"enabled", "zones"}
)

// converter holds one conversion: the fork's values in, this chart's out.
type converter struct {
	in    map[string]any
	out   map[string]any
	notes []string
	errs  []string
}

func (c *converter) notef(format string, args ...any) {
	c.notes = append(c.notes, fmt.Sprintf(format, args...))
}

func (c *converter) errorf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

// convert returns this chart's values for the fork chart's values in (YAML),
// the notes on what was dropped without a change of answers, and the
// refusals.
func convert(in []byte) (out map[string]any, notes, errs []string) {
	c := &converter{in: map[string]any{}, out: map[string]any{}}
	if err := yaml.Unmarshal(in, &c.in); err != nil {
		return nil, nil, []string{fmt.Sprintf("the values do not parse: %v", err)}
	}
	if c.in == nil {
		c.in = map[string]any{}
	}
	handlers := map[string]func(v any){
		"watchedResources": c.watchedResources,
		"filters":          func(v any) { c.submap("filters", v, filterKeys, c.out) },
		"fallthrough":      func(v any) { c.submap("fallthrough", v, fallthroughKeys, c.out) },
		"service":          func(v any) { c.submap("service", v, serviceKeys, c.out) },
		"serviceAccount":   func(v any) { c.submap("serviceAccount", v, serviceAccountKeys, c.out) },
		"extraZonePlugins": c.plugins,
		"dnsChallenge":     c.dnsChallenge,
		"debug":            c.debug,
		"scheme":           c.scheme,
		"secure":           c.secure,
		"image":            c.image,
		"zoneFiles":        c.zoneFiles,
	}
	for _, k := range copied {
		handlers[k] = func(v any) { c.out[k] = v }
	}
	for k, v := range forkAnswerDefaults {
		if _, ok := c.in[k]; !ok {
			c.in[k] = v
		}
	}
	svc, _ := c.in["service"].(map[string]any)
	if svc == nil {
		svc = map[string]any{}
		c.in["service"] = svc
	}
	if _, ok := svc["useTcp"]; !ok {
		svc["useTcp"] = false // the fork's Service has no TCP port by default
	}
	// The plugins first: debug and dnsChallenge add to them.
	keys := sortedKeys(c.in)
	if i := slices.Index(keys, "extraZonePlugins"); i > 0 {
		keys = append(append([]string{"extraZonePlugins"}, keys[:i]...), keys[i+1:]...)
	}
	for _, k := range keys {
		h := handlers[k]
		if h == nil {
			c.errorf("%s is not a value of the fork's chart: nothing to convert it to", k)
			continue
		}
		h(c.in[k])
	}
	return c.out, c.notes, c.errs
}

// submap copies the known keys of the map value v of key into out[key], and
// refuses the others.
func (c *converter) submap(key string, v any, known []string, out map[string]any) {
	m, ok := v.(map[string]any)
	if !ok {
		if v != nil {
			c.errorf("%s: a map was expected, not %T", key, v)
		}
		return
	}
	res := map[string]any{}
	for _, k := range sortedKeys(m) {
		if !slices.Contains(known, k) {
			c.errorf("%s.%s is not a value of the fork's chart: nothing to convert it to", key, k)
			continue
		}
		res[k] = m[k]
	}
	out[key] = res
}

// watchedResources refuses Node, which publishes the nodes' addresses.
func (c *converter) watchedResources(v any) {
	list, _ := v.([]any)
	if len(list) == 0 {
		list = forkAnswerDefaults["watchedResources"].([]any)
	}
	var kinds []any
	for _, k := range list {
		if k == "Node" {
			c.errorf("watchedResources: Node is not taken: this plugin never publishes node addresses, " +
				"which are the cluster's own; publish through a LoadBalancer Service (or a Service's spec.externalIPs), " +
				"or list the nodes' public addresses as the targets of a DNSEndpoint")
			continue
		}
		kinds = append(kinds, k)
	}
	if len(kinds) > 0 {
		c.out["watchedResources"] = kinds
	}
}

// plugins keeps a list of the fork's default plugins out: this chart's
// default list has the same plugins and their addresses.
func (c *converter) plugins(v any) {
	list, _ := v.([]any)
	var names []string
	for _, p := range list {
		if m, ok := p.(map[string]any); ok {
			names = append(names, fmt.Sprint(m["name"]))
		}
	}
	if slices.Equal(names, forkDefaultPlugins) {
		c.notef("extraZonePlugins: the fork's default list is replaced by this chart's " +
			"(the same plugins; no forward, as the server block here holds only the zones)")
		return
	}
	c.out["extraZonePlugins"] = v
}

// dnsChallenge turns the fork's CNAME of ACME challenges into the same
// template plugin, in extraZonePlugins.
func (c *converter) dnsChallenge(v any) {
	m, _ := v.(map[string]any)
	if m == nil || m["enabled"] != true {
		return
	}
	domain, _ := c.in["domain"].(string)
	target, _ := m["domain"].(string)
	if domain == "" || target == "" {
		c.errorf("dnsChallenge: needs domain and dnsChallenge.domain")
		return
	}
	regex := strings.ReplaceAll(domain, ".", "[.]")
	block := fmt.Sprintf("match \"_acme-challenge[.](.*)[.]%s\"\nanswer \"{{ .Name }} 5 IN CNAME {{ index .Match 1 }}.%s\"\nfallthrough", regex, target)
	c.addPlugin(map[string]any{"name": "template", "parameters": "IN ANY " + domain, "configBlock": block})
}

func (c *converter) debug(v any) {
	if m, _ := v.(map[string]any); m != nil && m["enabled"] == true {
		c.addPlugin(map[string]any{"name": "debug"})
	}
}

// addPlugin appends p to extraZonePlugins: to the values' own list (converted
// first), else to this chart's default list, which it must repeat.
func (c *converter) addPlugin(p map[string]any) {
	list, ok := c.out["extraZonePlugins"].([]any)
	if !ok {
		list = ourDefaultPlugins()
	}
	c.out["extraZonePlugins"] = append(slices.Clip(list), p)
}

// ourDefaultPlugins is this chart's default extraZonePlugins (values.yaml),
// which a values file that adds a plugin must repeat.
func ourDefaultPlugins() []any {
	return []any{
		map[string]any{"name": "log", "configBlock": "class denial error"},
		map[string]any{"name": "errors"},
		map[string]any{"name": "health", "parameters": ":8080", "configBlock": "lameduck 5s"},
		map[string]any{"name": "ready", "parameters": ":8181"},
		map[string]any{"name": "prometheus", "parameters": "0.0.0.0:9153"},
		map[string]any{"name": "loop"},
		map[string]any{"name": "reload"},
		map[string]any{"name": "loadbalance"},
	}
}

func (c *converter) scheme(v any) {
	if s, _ := v.(string); s != "" {
		c.errorf("scheme %q is not taken: this chart always serves plain DNS on the Service's port, and DNS over TLS "+
			"(dnsOverTLS.enabled) and over HTTPS (dnsOverHTTPS.enabled) beside it, with the certificate of tls.secretName "+
			"or tls.certManager; gRPC is not offered", s)
	}
}

func (c *converter) secure(v any) {
	if v == false {
		c.errorf("secure: false is not taken: this chart always runs CoreDNS as a non-root user (podSecurityContext, " +
			"runAsUser 65532); set podSecurityContext and securityContext to change the user")
		return
	}
	c.notef("secure: this chart runs as user 65532, not 1000, with a read-only root file system (podSecurityContext, securityContext)")
}

func (c *converter) image(v any) {
	if v != nil {
		c.notef("image: dropped, the fork's image is not this plugin; this chart's default image is used")
	}
}

// zoneFiles carries filename, domains and contents over; reload is what
// this chart does anyway, fallthrough is refused.
func (c *converter) zoneFiles(v any) {
	list, _ := v.([]any)
	var out []any
	for i, z := range list {
		m, ok := z.(map[string]any)
		if !ok {
			c.errorf("zoneFiles[%d]: a map was expected", i)
			continue
		}
		res := map[string]any{}
		for _, k := range sortedKeys(m) {
			switch k {
			case "filename", "domains", "contents":
				res[k] = m[k]
			case "reload":
				c.notef("zoneFiles[%d].reload: dropped, this chart reloads a zone file whenever its contents change", i)
			case "fallthrough":
				if f, _ := m[k].(map[string]any); f != nil && f["enabled"] == true {
					c.errorf("zoneFiles[%d].fallthrough is not taken: a zone file of one of the zones of domain is served "+
						"after k8s_gateway, which passes it the names it does not know with fallthrough.enabled; "+
						"a zone file of other zones is a server block of its own", i)
				}
			default:
				c.errorf("zoneFiles[%d].%s is not a value of the fork's chart", i, k)
			}
		}
		if _, ok := res["domains"]; !ok {
			c.errorf("zoneFiles[%d].domains is required here: the zones of the file (the fork's chart served it for the root zone, \".\")", i)
		}
		out = append(out, res)
	}
	if len(out) > 0 {
		c.out["zoneFiles"] = out
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
