// Command traefik runs the Kubernetes Ingress and Gateway API providers of
// Traefik (github.com/traefik/traefik/v3) against an API server: the code of
// the traefik binary that watches Ingresses, Gateways and routes and writes
// their status. The proxy itself is not part of it: the end-to-end tests need
// the status only, and the traefik command does not build from the Go module
// proxy (modules of its ACME DNS providers and a fork it replaces are refused).
//
// The flags are named after the traefik options they set. The API server and
// credentials come from $KUBECONFIG, as for traefik run outside a cluster.
// hack/baremetal.sh builds it; it is never part of the plugin.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/rs/zerolog"
	"github.com/rs/zerolog/log"
	"github.com/traefik/traefik/v3/pkg/config/dynamic"
	"github.com/traefik/traefik/v3/pkg/provider/kubernetes/gateway"
	"github.com/traefik/traefik/v3/pkg/provider/kubernetes/ingress"
	"github.com/traefik/traefik/v3/pkg/safe"
)

// entryPoints is the repeatable --entrypoint NAME=ADDRESS flag
// (traefik's --entryPoints.NAME.address).
type entryPoints map[string]gateway.Entrypoint

func (e entryPoints) String() string { return fmt.Sprint(map[string]gateway.Entrypoint(e)) }

func (e entryPoints) Set(v string) error {
	name, addr, ok := strings.Cut(v, "=")
	if !ok || name == "" || addr == "" {
		return fmt.Errorf("want NAME=ADDRESS, got %q", v)
	}
	e[name] = gateway.Entrypoint{Address: addr}
	return nil
}

func main() {
	eps := entryPoints{}
	flag.Var(eps, "entrypoint", "NAME=ADDRESS, repeatable (entryPoints.NAME.address)")
	withIngress := flag.Bool("providers.kubernetesingress", false, "run the Ingress provider")
	ingressClass := flag.String("providers.kubernetesingress.ingressclass", "", "IngressClass name to watch for")
	published := flag.String("providers.kubernetesingress.ingressendpoint.publishedservice", "", "NAMESPACE/NAME of the Service whose status the Ingresses get")
	withGateway := flag.Bool("providers.kubernetesgateway", false, "run the Gateway API provider")
	selector := flag.String("providers.kubernetesgateway.labelselector", "", "label selector of the GatewayClasses to handle")
	statusService := flag.String("providers.kubernetesgateway.statusaddress.service", "", "NAMESPACE/NAME of the Service whose addresses the Gateways get")
	namespaces := flag.String("namespaces", "", "comma-separated namespaces to watch (both providers); empty: all")
	level := flag.String("log.level", "info", "debug, info, warn or error")
	flag.Parse()

	lvl, err := zerolog.ParseLevel(*level)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	zerolog.SetGlobalLevel(lvl)
	log.Logger = zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, NoColor: true}).With().Timestamp().Logger()
	zerolog.DefaultContextLogger = &log.Logger

	var ns []string
	if *namespaces != "" {
		ns = strings.Split(*namespaces, ",")
	}
	var providers []interface {
		Init() error
		Provide(chan<- dynamic.Message, *safe.Pool) error
	}
	if *withIngress {
		p := &ingress.Provider{Namespaces: ns, IngressClass: *ingressClass}
		if *published != "" {
			p.IngressEndpoint = &ingress.EndpointIngress{PublishedService: *published}
		}
		providers = append(providers, p)
	}
	if *withGateway {
		p := &gateway.Provider{Namespaces: ns, LabelSelector: *selector, EntryPoints: eps}
		p.SetDefaults()
		if *statusService != "" {
			sns, name, ok := strings.Cut(*statusService, "/")
			if !ok {
				fmt.Fprintln(os.Stderr, "statusaddress.service: want NAMESPACE/NAME")
				os.Exit(2)
			}
			p.StatusAddress = &gateway.StatusAddress{Service: gateway.ServiceRef{Namespace: sns, Name: name}}
		}
		providers = append(providers, p)
	}
	if len(providers) == 0 {
		fmt.Fprintln(os.Stderr, "no provider enabled")
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	pool := safe.NewPool(ctx)
	configurations := make(chan dynamic.Message)
	for _, p := range providers {
		if err := p.Init(); err != nil {
			log.Fatal().Err(err).Msg("provider init")
		}
		if err := p.Provide(configurations, pool); err != nil {
			log.Fatal().Err(err).Msg("provider start")
		}
	}
	// The dynamic configuration would program the proxy; here it is only
	// counted. The status is written by the providers themselves.
	for {
		select {
		case m := <-configurations:
			log.Info().Str("providerName", m.ProviderName).Msg("configuration received")
		case <-ctx.Done():
			pool.Stop()
			return
		}
	}
}
