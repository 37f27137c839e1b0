// Command acmeclient is the RFC 2136 ACME client of the end-to-end tests: it
// registers with an ACME CA (Pebble) and obtains a certificate through the
// DNS-01 challenge, written by lego's RFC 2136 provider with TSIG. hack/acme.sh
// builds it in a module of its own: the plugin never imports it.
//
// lego's own command cannot be built from the module proxy (several of its
// DNS providers' SDKs are refused), so this is lego's library, its
// rfc2136/dnsupdate provider and dns01 solver, behind a few flags.
package main

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/go-acme/lego/v5/acme"
	"github.com/go-acme/lego/v5/certcrypto"
	"github.com/go-acme/lego/v5/certificate"
	"github.com/go-acme/lego/v5/challenge/dns01"
	"github.com/go-acme/lego/v5/lego"
	"github.com/go-acme/lego/v5/providers/dns/dnsupdate"
	"github.com/go-acme/lego/v5/registration"
)

type user struct {
	key crypto.Signer
	reg *acme.ExtendedAccount
}

func (u *user) GetEmail() string                       { return "" }
func (u *user) GetRegistration() *acme.ExtendedAccount { return u.reg }
func (u *user) GetPrivateKey() crypto.Signer           { return u.key }

func main() {
	dir := flag.String("ca", "https://127.0.0.1:14000/dir", "ACME directory URL")
	caCert := flag.String("ca-cert", "", "PEM file of the CA's TLS certificate")
	ns := flag.String("nameserver", "127.0.0.1:53", "the RFC 2136 server (host:port)")
	resolver := flag.String("resolver", "", "the resolver of the propagation check (host:port); default the nameserver")
	zone := flag.String("zone", "", "the zone to update")
	key := flag.String("tsig-key", "", "TSIG key name")
	secret := flag.String("tsig-secret", "", "TSIG secret (base64)")
	alg := flag.String("tsig-algorithm", "hmac-sha256.", "TSIG algorithm")
	domains := flag.String("domains", "", "comma-separated names of the certificate")
	out := flag.String("out", "", "write the certificate chain (PEM) here")
	timeout := flag.Duration("timeout", 2*time.Minute, "overall timeout")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	check := *ns
	if *resolver != "" {
		check = *resolver
	}
	if err := run(ctx, *dir, *caCert, *ns, check, *zone, *key, *secret, *alg, strings.Split(*domains, ","), *out); err != nil {
		fmt.Fprintln(os.Stderr, "acmeclient:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir, caCert, ns, resolver, zone, key, secret, alg string, domains []string, out string) error {
	pk, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	u := &user{key: pk}
	cfg := lego.NewConfig(u)
	cfg.CADirURL = dir
	pool := x509.NewCertPool()
	if caCert != "" {
		pem, err := os.ReadFile(caCert)
		if err != nil {
			return err
		}
		pool.AppendCertsFromPEM(pem)
	}
	cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	client, err := lego.NewClient(cfg)
	if err != nil {
		return err
	}
	if u.reg, err = client.Registration.Register(ctx, registration.RegisterOptions{TermsOfServiceAgreed: true}); err != nil {
		return fmt.Errorf("register: %w", err)
	}
	pc := dnsupdate.NewDefaultConfig()
	pc.Nameserver, pc.Zones = ns, []string{zone}
	pc.TSIGKey, pc.TSIGSecret, pc.TSIGAlgorithm = key, secret, alg
	pc.PropagationTimeout, pc.PollingInterval, pc.TTL = 30*time.Second, time.Second, 60
	provider, err := dnsupdate.NewDNSProviderConfig(pc)
	if err != nil {
		return err
	}
	opts := dns01.NewOptions()
	opts.RecursiveNameservers = []string{resolver}
	dns01.SetDefaultClient(dns01.NewClient(opts))
	if err := client.Challenge.SetDNS01Provider(provider, dns01.DisableAuthoritativeNssPropagationRequirement()); err != nil {
		return err
	}
	res, err := client.Certificate.Obtain(ctx, certificate.ObtainRequest{Domains: domains, Bundle: true, KeyType: certcrypto.EC256})
	if err != nil {
		return fmt.Errorf("obtain: %w", err)
	}
	if out != "" {
		return os.WriteFile(out, res.Certificate, 0o644)
	}
	return nil
}
