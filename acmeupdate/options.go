package acmeupdate

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/seed-e581d630/k8s_gateway/internal/tsig"
)

// Options are those of the Corefile's updates block:
//
//	updates {
//	    listen ADDRESS
//	    key NAME ALGORITHM FILE NAMESPACE
//	    secrets [NAMESPACES...]
//	    tenant_secrets NAMESPACE [TENANTS...]
//	    expire DURATION
//	    maxttl SECONDS
//	    rate N
//	    fudge SECONDS
//	}
type Options struct {
	// Listen is the address (host:port) UPDATE messages are read on, UDP
	// and TCP (see Listen).
	Listen string
	Keys   []Key
	// Secrets: keys from labelled Secrets; SecretsNamespaces limits them to
	// those namespaces (and the janitor too, with the Corefile keys' ones).
	Secrets           bool
	SecretsNamespaces []string
	// tenantSecrets: keys from the labelled Secrets of this one namespace
	// (the platform team's), each acting for the namespace its tenantLabel
	// names, one of tenants when they are given.
	tenantSecrets string
	tenants       []string
	Expire        time.Duration
	Limits        Limits
	RatePerMinute int
	Fudge         uint16
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	l := DefaultLimits
	l.MaxTTL = 300
	return &Options{Expire: time.Hour, Limits: l, RatePerMinute: 30, Fudge: 300}
}

// Set applies one line of the block.
func (o *Options) Set(opt string, args []string) error {
	one := func(usage string) error {
		if len(args) != 1 {
			return fmt.Errorf("%s: want %s, got %d argument(s)", opt, usage, len(args))
		}
		return nil
	}
	number := func(usage string, lo, hi int) (int, error) {
		if err := one(usage); err != nil {
			return 0, err
		}
		n, err := strconv.Atoi(args[0])
		if err != nil || n < lo || n > hi {
			return 0, fmt.Errorf("%s must be an integer from %d to %d, got %q", opt, lo, hi, args[0])
		}
		return n, nil
	}
	var err error
	var n int
	switch opt {
	case "listen":
		if err = one("ADDRESS"); err == nil {
			if _, _, err = net.SplitHostPort(args[0]); err != nil {
				err = fmt.Errorf("listen: want HOST:PORT, got %q", args[0])
			} else {
				o.Listen = args[0]
			}
		}
	case "key":
		if len(args) != 4 {
			return fmt.Errorf("key: want key NAME ALGORITHM FILE NAMESPACE, got %d argument(s)", len(args))
		}
		secret, err := tsig.ReadSecretFile(args[2])
		if err != nil {
			return fmt.Errorf("key %s: %v", args[0], err)
		}
		k, err := NewKey(args[0], args[1], secret, args[3], "Corefile")
		if err != nil {
			return err
		}
		for _, other := range o.Keys {
			if other.Name == k.Name {
				return fmt.Errorf("key %s is given twice", k.Name)
			}
		}
		o.Keys = append(o.Keys, k)
	case "secrets":
		o.Secrets = true
		o.SecretsNamespaces = append(o.SecretsNamespaces, args...)
	case "tenant_secrets":
		if len(args) == 0 {
			return fmt.Errorf("tenant_secrets: want tenant_secrets NAMESPACE [TENANTS...]")
		}
		if o.tenantSecrets != "" {
			return fmt.Errorf("tenant_secrets is given twice")
		}
		for _, ns := range args {
			if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
				return fmt.Errorf("tenant_secrets: %q is not a namespace name", ns)
			}
		}
		o.tenantSecrets, o.tenants = args[0], args[1:]
	case "expire":
		var d time.Duration
		if err = one("DURATION"); err == nil {
			d, err = time.ParseDuration(args[0])
		}
		if err == nil && d < time.Minute {
			err = fmt.Errorf("expire: at least 1m, got %s", args[0])
		}
		if err == nil {
			o.Expire = d
		}
	case "maxttl":
		if n, err = number("SECONDS", 0, 86400); err == nil {
			o.Limits.MaxTTL = uint32(n) // #nosec G115 -- checked
		}
	case "rate":
		if n, err = number("N", 1, 100000); err == nil {
			o.RatePerMinute = n
		}
	case "fudge":
		if n, err = number("SECONDS", 1, 3600); err == nil {
			o.Fudge = uint16(n) // #nosec G115 -- checked
		}
	default:
		return fmt.Errorf("unknown updates property %q", opt)
	}
	return err
}

// Namespaces returns the namespaces the plugin writes and expires challenges
// in: every one ("") when keys come from the Secrets of every namespace, or
// act for any tenant (tenant_secrets without TENANTS), else those of the
// Corefile's keys, of the secrets line and of the tenants.
func (o *Options) Namespaces() []string {
	if o.Secrets && len(o.SecretsNamespaces) == 0 || o.tenantSecrets != "" && len(o.tenants) == 0 {
		return []string{""}
	}
	var out []string
	for _, k := range o.Keys {
		if !slices.Contains(out, k.Namespace) {
			out = append(out, k.Namespace)
		}
	}
	for _, ns := range slices.Concat(o.SecretsNamespaces, o.tenants) {
		if !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out
}

// secretsWatched returns the namespaces whose labelled Secrets hold keys
// ("" for all), each watched once, and how their keys are bound.
func (o *Options) secretsWatched() ([]string, SecretTenancy) {
	st := SecretTenancy{shared: o.tenantSecrets, tenants: o.tenants}
	var out []string
	if o.Secrets {
		out = o.SecretsNamespaces
		if len(out) == 0 {
			return []string{""}, st // the shared namespace's too
		}
	}
	if o.tenantSecrets != "" {
		out = append(slices.Clone(out), o.tenantSecrets)
	}
	return out, st
}

// Check reports an unusable configuration.
func (o *Options) Check() error {
	if len(o.Keys) == 0 && !o.Secrets && o.tenantSecrets == "" {
		return fmt.Errorf("updates: no key: give key lines, secrets or tenant_secrets")
	}
	if slices.Contains(o.SecretsNamespaces, o.tenantSecrets) {
		return fmt.Errorf("updates: namespace %s is given to secrets (keys acting for it) and to tenant_secrets (keys acting for the tenants their label names): give it to one", o.tenantSecrets)
	}
	if o.Listen == "" {
		return fmt.Errorf("updates: no listen address: UPDATE messages are read on an address of their own (listen HOST:PORT)")
	}
	return nil
}
