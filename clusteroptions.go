package gateway

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed-e581d630/k8s_gateway/index"
	"github.com/seed-e581d630/k8s_gateway/source"

	"k8s.io/apimachinery/pkg/labels"
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
	labelSelectors map[string]string   // ... unless set for the kind here
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
		labelSelectors: map[string]string{},
		delegations:    map[string][]string{},
	}
}

// errUnknownOption is what setClusterOption returns for an option it does not know.
var errUnknownOption = fmt.Errorf("unknown option")

// setClusterOption applies one option line, opt with its args. Errors say
// what is wrong without the Corefile position, which the caller adds.
func setClusterOption(o *clusterOptions, opt string, args []string) error {
	switch opt {
	case "resources":
		if len(args) == 0 {
			return usageErr("resources RESOURCE...", args)
		}
		o.resources = nil
		for _, a := range args {
			kind, ok := source.CanonicalKind(a)
			if !ok {
				return fmt.Errorf("unknown resource %q; supported: %s", a, strings.Join(source.SupportedKinds(), ", "))
			}
			if !slices.Contains(o.resources, kind) {
				o.resources = append(o.resources, kind)
			}
		}
	case "kubeconfig":
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
	case "ingressClasses", "gatewayClasses":
		if len(args) == 0 {
			return usageErr(opt+" CLASS...", args)
		}
		if opt == "ingressClasses" {
			o.ingressClasses = args
		} else {
			o.gatewayClasses = args
		}
	case "serviceLabelSelectors", "labelSelector":
		if len(args) == 0 {
			return usageErr(opt+" SELECTOR...", args)
		}
		sel := strings.Join(args, ",")
		if _, err := labels.Parse(sel); err != nil {
			return fmt.Errorf("invalid label selector %q: %v", sel, err)
		}
		if opt == "labelSelector" {
			o.labelSelector = sel
		} else {
			o.labelSelectors = cloneMap(o.labelSelectors)
			o.labelSelectors["Service"] = sel
		}
	case "delegate":
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
	case "events":
		if len(args) != 0 {
			return usageErr("events", args)
		}
		o.emitEvents = true
	case "namespaces":
		if len(args) == 0 {
			return usageErr("namespaces NAMESPACE...", args)
		}
		o.namespaces = args
	default:
		return setHealthOption(o, opt, args)
	}
	return nil
}

// setHealthOption applies the options of health and failover: health,
// priority, failover.
func setHealthOption(o *clusterOptions, opt string, args []string) error {
	switch opt {
	case "health", "withdraw_unhealthy":
		if len(args) != 0 {
			return usageErr(opt, args)
		}
		o.health = true
	case "priority":
		if len(args) != 1 {
			return usageErr("priority N", args)
		}
		n, err := strconv.ParseInt(args[0], 10, 32)
		if err != nil || n < 0 || n > 1000000 {
			return fmt.Errorf("priority %q: want an integer from 0 to 1000000", args[0])
		}
		o.priority = int32(n)
	case "failover":
		if len(args) != 1 {
			return usageErr("failover DURATION", args)
		}
		d, err := time.ParseDuration(args[0])
		if err != nil || d < time.Second {
			return fmt.Errorf("failover %q: want a duration of at least 1s, such as 60s", args[0])
		}
		o.failover = d
	default:
		return setSteeringOption(o, opt, args)
	}
	return nil
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
