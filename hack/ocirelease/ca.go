package main

import (
	"bytes"
	"encoding/pem"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// caBundle is the PEM bundle of /etc/ssl/certs/ca-certificates.crt: the
// roots of Mozilla's NSS store as the pinned x509roots/fallback module has
// them, in its order. A root with a constraint (a distrust-after date) is
// left out: a PEM file cannot say it, and trusting it without would accept
// what NSS refuses.
func caBundle() []byte {
	var buf bytes.Buffer
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			continue
		}
		_ = pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate})
	}
	return buf.Bytes()
}
