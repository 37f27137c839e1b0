package gateway

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/source"
)

// clusterOptions say how one cluster is read and which of its objects are
// published. A k8s_gateway block sets them for its one cluster, or as the
// defaults of its cluster blocks.
type clusterOptions struct {
	kubeconfig     string
	kubecontext    string
	resources      []string // kinds to publish
	ingressClasses []string
	gatewayClasses []string
	labelSelector  string              // for every published kind ...
	labelSelectors map[string][]string // ... unless set for the kind here: any of these
	namespaces     []string            // publish only from these; all when empty
	delegations    map[string][]string // namespace → domains from the delegate option
	emitEvents     bool                // the events option: Events on rejected objects
	health         bool                // the health option: withdraw unhealthy addresses
	priority       int32               // of a cluster block: lower answers first (fleet failover)
	failover       time.Duration       // a cluster silent this long counts as unhealthy; 0: never
	weight         uint32              // the weight option (steering.go); 0: unset
	location       index.Location      // the location option (steering.go)
}

func newClusterOptions() clusterOptions {
	return clusterOptions{
		resources:      source.SupportedKinds(),
		labelSelectors: map[string][]string{},
		delegations:    map[string][]string{},
	}
}

// errUnknownOption is what setClusterOption returns for an option it does not know.
var errUnknownOption = fmt.Errorf("unknown option")

// clusterOption is one row of the table of cluster options: how its line
// parses, and how a cluster block that does not set it takes it from the
// k8s_gateway block (nil: never taken; kubeconfig is each cluster's own, and
// delegations add up, see clusterSpec.resolved).
type clusterOption struct {
	parse   func(o *clusterOptions, opt string, args []string) error
	inherit func(o, block *clusterOptions)
}

// clusterOptionTable holds every option of a cluster, by name: the options
// of a k8s_gateway block with no cluster blocks, and the defaults of its
// cluster blocks. Each is documented in the README's Syntax (TestClusterOptionsDocumented).
var clusterOptionTable = map[string]clusterOption{
	"kubeconfig":            {parse: parseKubeconfig},
	"resources":             {parseResources, func(o, b *clusterOptions) { o.resources = b.resources }},
	"ingressClasses":        {parseClasses, func(o, b *clusterOptions) { o.ingressClasses = b.ingressClasses }},
	"gatewayClasses":        {parseClasses, func(o, b *clusterOptions) { o.gatewayClasses = b.gatewayClasses }},
	"labelSelector":         {parseSelector, func(o, b *clusterOptions) { o.labelSelector = b.labelSelector }},
	"serviceLabelSelectors": {parseSelector, func(o, b *clusterOptions) { o.labelSelectors = b.labelSelectors }},
	"namespaces":            {parseNamespaces, func(o, b *clusterOptions) { o.namespaces = b.namespaces }},
	"delegate":              {parse: parseDelegate},
	"events":                {parseEvents, func(o, b *clusterOptions) { o.emitEvents = b.emitEvents }},
	"health":                {parseHealth, func(o, b *clusterOptions) { o.health = b.health }},
	"priority":              {parsePriority, func(o, b *clusterOptions) { o.priority = b.priority }},
	"failover":              {parseFailover, func(o, b *clusterOptions) { o.failover = b.failover }},
	"weight":                {parseWeight, func(o, b *clusterOptions) { o.weight = b.weight }},
	"location":              {parseLocation, func(o, b *clusterOptions) { o.location = b.location }},
}

// refusedOptions are options of the k8s-gateway fork that the plugin does
// not take, with what to do instead.
var refusedOptions = map[string]string{
	"nodeAddressType": "nodeAddressType (of the k8s-gateway fork's resources Node) is not supported: " + noNodeAddresses,
}

// noNodeAddresses says what to use instead of publishing Nodes.
const noNodeAddresses = "the plugin never publishes node addresses, which are the cluster's own; " +
	"publish through a LoadBalancer Service (or a Service's spec.externalIPs), or list the nodes' public addresses " +
	"as the targets of a DNSEndpoint"

// setClusterOption applies one option line, opt (a name or an alias) with its
// args. Errors say what is wrong without the Corefile position, which the
// caller adds.
func setClusterOption(o *clusterOptions, opt string, args []string) error {
	row, ok := clusterOptionTable[canonicalOption(opt)]
	if hint, refused := refusedOptions[opt]; !ok && refused {
		return errors.New(hint)
	}
	if !ok {
		return errUnknownOption
	}
	return row.parse(o, opt, args)
}

func parseResources(o *clusterOptions, _ string, args []string) error {
	if len(args) == 0 {
		return usageErr("resources RESOURCE...", args)
	}
	o.resources = nil
	for _, a := range args {
		kind, ok := source.CanonicalKind(a)
		if !ok && strings.EqualFold(a, "Node") {
			return fmt.Errorf("resource Node (of the k8s-gateway fork) is not supported: %s", noNodeAddresses)
		}
		if !ok {
			return fmt.Errorf("unknown resource %q; supported: %s", a, strings.Join(source.SupportedKinds(), ", "))
		}
		if !slices.Contains(o.resources, kind) {
			o.resources = append(o.resources, kind)
		}
	}
	return nil
}

func parseKubeconfig(o *clusterOptions, _ string, args []string) error {
	if len(args) != 1 && len(args) != 2 {
		return usageErr("kubeconfig FILE [CONTEXT]", args)
	}
	o.kubeconfig, o.kubecontext = args[0], ""
	if len(args) == 2 {
		o.kubecontext = args[1]
	}
	if err := checkKubeconfig(o.kubeconfig, o.kubecontext); err != nil {
		return fmt.Errorf("kubeconfig: %v", err)
	}
	return nil
}

// parseClasses reads ingressClasses and gatewayClasses.
func parseClasses(o *clusterOptions, opt string, args []string) error {
	if len(args) == 0 {
		return usageErr(opt+" CLASS...", args)
	}
	if opt == "ingressClasses" {
		o.ingressClasses = args
	} else {
		o.gatewayClasses = args
	}
	return nil
}

// parseSelector reads labelSelector, whose arguments are joined with commas
// (an object must match all), and serviceLabelSelectors, whose arguments are
// each a selector (a Service that matches any is published, as in the
// original k8s_gateway).
func parseSelector(o *clusterOptions, opt string, args []string) error {
	if len(args) == 0 {
		return usageErr(opt+" SELECTOR...", args)
	}
	if opt == "labelSelector" {
		sel := strings.Join(args, ",")
		if _, err := labels.Parse(sel); err != nil {
			return fmt.Errorf("invalid label selector %q: %v", sel, err)
		}
		o.labelSelector = sel
		return nil
	}
	var sels []string
	for _, sel := range args {
		if _, err := labels.Parse(sel); err != nil || strings.TrimSpace(sel) == "" {
			return fmt.Errorf("invalid label selector %q: %v (each argument is a selector, and a Service matching any "+
				"is published; for a Service that must match all, join them with commas in one argument)", sel, err)
		}
		if !slices.Contains(sels, sel) {
			sels = append(sels, sel)
		}
	}
	o.labelSelectors = cloneMap(o.labelSelectors)
	o.labelSelectors["Service"] = sels
	return nil
}

func parseNamespaces(o *clusterOptions, _ string, args []string) error {
	if len(args) == 0 {
		return usageErr("namespaces NAMESPACE...", args)
	}
	o.namespaces = args
	return nil
}

func parseDelegate(o *clusterOptions, _ string, args []string) error {
	if len(args) < 2 {
		return usageErr("delegate NAMESPACE DOMAIN...", args)
	}
	o.delegations = cloneMap(o.delegations)
	for _, d := range args[1:] {
		name, err := source.CanonicalName(d, false)
		if err != nil {
			return fmt.Errorf("invalid domain %q delegated to namespace %s: %v", d, args[0], err)
		}
		if !slices.Contains(o.delegations[args[0]], name) {
			o.delegations[args[0]] = append(slices.Clip(o.delegations[args[0]]), name)
		}
	}
	return nil
}

func parseEvents(o *clusterOptions, _ string, args []string) error {
	if len(args) != 0 {
		return usageErr("events", args)
	}
	o.emitEvents = true
	return nil
}

// parseHealth reads health and its alias withdraw_unhealthy.
func parseHealth(o *clusterOptions, opt string, args []string) error {
	if len(args) != 0 {
		return usageErr(opt, args)
	}
	o.health = true
	return nil
}

func parsePriority(o *clusterOptions, _ string, args []string) error {
	if len(args) != 1 {
		return usageErr("priority N", args)
	}
	n, err := strconv.ParseInt(args[0], 10, 32)
	if err != nil || n < 0 || n > 1000000 {
		return fmt.Errorf("priority %q: want an integer from 0 to 1000000", args[0])
	}
	o.priority = int32(n)
	return nil
}

func parseFailover(o *clusterOptions, _ string, args []string) error {
	if len(args) != 1 {
		return usageErr("failover DURATION", args)
	}
	d, err := time.ParseDuration(args[0])
	if err != nil || d < time.Second {
		return fmt.Errorf("failover %q: want a duration of at least 1s, such as 60s", args[0])
	}
	o.failover = d
	return nil
}

// parseWeight reads the weight option of a cluster.
func parseWeight(o *clusterOptions, _ string, args []string) error {
	if len(args) != 1 {
		return usageErr("weight N", args)
	}
	w, err := source.ParseWeight(args[0])
	if err != nil {
		return err
	}
	o.weight = w
	return nil
}

// parseLocation reads the location option of a cluster.
func parseLocation(o *clusterOptions, opt string, args []string) error {
	l, err := parseLocationArgs(opt, args)
	if err != nil {
		return err
	}
	o.location = l
	return nil
}

// parseLocationArgs reads the arguments of a location option.
func parseLocationArgs(opt string, args []string) (index.Location, error) {
	if len(args) == 0 {
		return index.Location{}, usageErr(opt+" [continent=CODE] [country=CODE] [region=CODE]", args)
	}
	return index.ParseLocation(strings.Join(args, ","))
}

// optionAliases are other names of options: withdraw_unhealthy says what
// health does, and is not CoreDNS's health plugin.
var optionAliases = map[string]string{"withdraw_unhealthy": "health"}

// canonicalOption returns the name opt is an alias of, or opt.
func canonicalOption(opt string) string {
	if name, ok := optionAliases[opt]; ok {
		return name
	}
	return opt
}

// cloneMap copies m, so that options copied from the block's are changed apart.
func cloneMap[V any](m map[string]V) map[string]V {
	if m == nil {
		return map[string]V{}
	}
	return maps.Clone(m)
}

// usageErr reports a wrong number of arguments, naming the option and how it
// is used (caddy's ArgErr names only the last token read).
func usageErr(usage string, args []string) error {
	return fmt.Errorf("wrong number of arguments (%d) for %s", len(args), usage)
}
