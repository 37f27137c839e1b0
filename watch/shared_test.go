package watch

import (
	"net/http"
	"testing"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

var clientcmdExec = clientcmdapi.ExecConfig{Command: "aws", Args: []string{"eks", "get-token"}}

// TestShareKeyOf: configurations share informers exactly when they read the
// same server with the same credentials.
func TestShareKeyOf(t *testing.T) {
	base := func() *rest.Config {
		return &rest.Config{Host: "https://192.0.2.1:6443", BearerToken: "secret",
			TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca")}}
	}
	key := shareKeyOf(base())
	if key == "" || shareKeyOf(base()) != key {
		t.Fatalf("equal configurations: keys %q and %q", key, shareKeyOf(base()))
	}
	for name, change := range map[string]func(*rest.Config){
		"another server":      func(c *rest.Config) { c.Host = "https://192.0.2.2:6443" },
		"another token":       func(c *rest.Config) { c.BearerToken = "other" },
		"a token file":        func(c *rest.Config) { c.BearerTokenFile = "/var/run/token" },
		"a client cert":       func(c *rest.Config) { c.CertData = []byte("cert") },
		"another CA":          func(c *rest.Config) { c.CAData = []byte("other ca") },
		"impersonation":       func(c *rest.Config) { c.Impersonate.UserName = "alice" },
		"an exec plugin":      func(c *rest.Config) { c.ExecProvider = &clientcmdExec },
		"insecure TLS":        func(c *rest.Config) { c.Insecure = true },
		"another server name": func(c *rest.Config) { c.ServerName = "api.example.com" },
	} {
		c := base()
		change(c)
		if k := shareKeyOf(c); k == key || k == "" {
			t.Errorf("%s: key %q, want one of its own", name, k)
		}
	}
	c := base()
	c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return rt }
	if k := shareKeyOf(c); k != "" {
		t.Errorf("a wrapped transport: key %q, want none (never shared)", k)
	}
}
