// Command certmanager runs cert-manager's controllers (the ACME issuer, its
// orders and challenges, and the Certificate controllers) against a cluster,
// for the end-to-end tests of RFC 2136 updates. cert-manager's own command is
// a module of its own that the module proxy does not serve; its controllers
// are in the main module, and this starts the ones an ACME Certificate needs,
// as cert-manager's command does, with the DNS-01 self-check pointed at the
// plugin. hack/acme.sh builds it in a module of its own: the plugin never
// imports it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cert-manager/cert-manager/pkg/controller"
	_ "github.com/cert-manager/cert-manager/pkg/controller/acmechallenges"
	_ "github.com/cert-manager/cert-manager/pkg/controller/acmeorders"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/acme"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/acme"
)

// controllers are those an ACME Certificate with a namespaced Issuer needs.
var controllers = []string{
	"issuers", "orders", "challenges",
	"certificaterequests-issuer-acme", "certificaterequests-approver",
	"certificates-trigger", "certificates-issuing", "certificates-key-manager",
	"certificates-request-manager", "certificates-readiness", "certificates-revision-manager",
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster")
	namespace := flag.String("cluster-resource-namespace", "default", "namespace of ClusterIssuers' resources")
	nameservers := flag.String("dns01-recursive-nameservers", "", "comma-separated host:port the DNS-01 self-check asks")
	flag.Parse()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, *kubeconfig, *namespace, strings.Split(*nameservers, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "certmanager:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, namespace string, nameservers []string) error {
	opts := controller.ContextOptions{
		Kubeconfig:       kubeconfig,
		KubernetesAPIQPS: 50, KubernetesAPIBurst: 100,
		IssuerOptions: controller.IssuerOptions{ClusterResourceNamespace: namespace},
		ACMEOptions: controller.ACMEOptions{
			DNS01CheckAuthoritative: false, // recursive nameservers only: the plugin
			DNS01Nameservers:        nameservers,
			DNS01CheckRetryPeriod:   time.Second,
		},
		SchedulerOptions:   controller.SchedulerOptions{MaxConcurrentChallenges: 60},
		CertificateOptions: controller.CertificateOptions{CertificateRequestMinimumBackoffDuration: time.Second, CertificateRequestMaximumBackoffDuration: 5 * time.Second},
	}
	factory, err := controller.NewContextFactory(ctx, opts)
	if err != nil {
		return err
	}
	errs := make(chan error, len(controllers))
	for name, construct := range controller.Known() {
		if !slices.Contains(controllers, name) {
			continue
		}
		c, err := construct(factory)
		if err != nil {
			return fmt.Errorf("controller %s: %w", name, err)
		}
		fmt.Println("starting controller", name)
		go func() { errs <- c.Run(2, ctx) }()
	}
	shared, err := factory.Build("informers")
	if err != nil {
		return err
	}
	shared.SharedInformerFactory.Start(ctx.Done())
	shared.KubeSharedInformerFactory.Start(ctx.Done())
	// The challenges controller waits for these (HTTP-01's Pods and Services) too.
	shared.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())
	fmt.Println("cert-manager controllers running")
	select {
	case <-ctx.Done():
		return nil
	case err := <-errs:
		return err
	}
}
