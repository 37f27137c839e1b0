// Command ocirelease assembles and pushes the project's multi-arch OCI images
// without a container engine: it never runs anything, it only writes layers
// and JSON (github.com/google/go-containerregistry). make release uses it.
//
//	ocirelease base  -tag REGISTRY/k8s-gateway-base:TAG [-ca FILE]
//	    a minimal base (CA certificates, /etc/passwd with nonroot 65532) for
//	    linux/amd64 and linux/arm64; prints REGISTRY/k8s-gateway-base@sha256:...
//	ocirelease image -base REF@sha256:... -tag REF -binary linux/amd64=FILE ... [-label K=V ...]
//	    the base's image of each platform plus the binary as /coredns, run as
//	    65532 on 1053/udp+tcp; one index, labels on every config and
//	    annotations on every manifest and the index; prints REF@sha256:...
//
// It is a module of its own so that the plugin's go.mod never grows.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "base":
		err = runBase(os.Args[2:])
	case "image":
		err = runImage(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ocirelease:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: ocirelease base|image ... (see the package comment)")
	os.Exit(2)
}

// pairs is a repeatable K=V flag.
type pairs []string

func (p *pairs) String() string     { return strings.Join(*p, ",") }
func (p *pairs) Set(v string) error { *p = append(*p, v); return nil }

func (p pairs) split() (map[string]string, []string, error) {
	m, keys := map[string]string{}, []string{}
	for _, kv := range p {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, nil, fmt.Errorf("%q: want KEY=VALUE", kv)
		}
		if _, dup := m[k]; !dup {
			keys = append(keys, k)
		}
		m[k] = v
	}
	return m, keys, nil
}

// created is the time every image and layer carries: SOURCE_DATE_EPOCH
// (make release sets the commit's time), so that a rebuild is byte-identical.
func created() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	var sec int64
	if _, err := fmt.Sscan(s, &sec); err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", s, err)
	}
	return time.Unix(sec, 0).UTC(), nil
}

var remoteOpts = []remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain)}

func runBase(args []string) error {
	fs := flag.NewFlagSet("base", flag.ExitOnError)
	tag := fs.String("tag", "", "where to push the base (REGISTRY/NAME:TAG)")
	ca := fs.String("ca", "/etc/ssl/certs/ca-certificates.crt", "the CA bundle to ship as /etc/ssl/certs/ca-certificates.crt")
	_ = fs.Parse(args)
	if *tag == "" {
		return errors.New("base: -tag is required")
	}
	ref, err := name.NewTag(*tag)
	if err != nil {
		return err
	}
	when, err := created()
	if err != nil {
		return err
	}
	idx, err := baseIndex(*ca, when)
	if err != nil {
		return err
	}
	return pushIndex(ref, idx)
}

func runImage(args []string) error {
	fs := flag.NewFlagSet("image", flag.ExitOnError)
	base := fs.String("base", "", "the base image, pinned by digest (NAME@sha256:...)")
	tag := fs.String("tag", "", "where to push the image (REGISTRY/NAME:TAG)")
	var binaries, labels pairs
	fs.Var(&binaries, "binary", "PLATFORM=FILE, e.g. linux/arm64=dist/coredns-linux-arm64 (repeat per platform)")
	fs.Var(&labels, "label", "KEY=VALUE: a label of every config and an annotation of every manifest and the index (repeatable)")
	_ = fs.Parse(args)
	if *base == "" || *tag == "" || len(binaries) == 0 {
		return errors.New("image: -base, -tag and at least one -binary are required")
	}
	baseRef, err := name.NewDigest(*base)
	if err != nil {
		return fmt.Errorf("-base %q must be pinned by digest (NAME@sha256:...): %w", *base, err)
	}
	ref, err := name.NewTag(*tag)
	if err != nil {
		return err
	}
	bins, order, err := binaries.split()
	if err != nil {
		return err
	}
	lbls, _, err := labels.split()
	if err != nil {
		return err
	}
	when, err := created()
	if err != nil {
		return err
	}
	idx, err := releaseIndex(baseRef, bins, order, lbls, when)
	if err != nil {
		return err
	}
	return pushIndex(ref, idx)
}

// pushIndex pushes idx to ref and prints where it went, by digest.
func pushIndex(ref name.Reference, idx v1.ImageIndex) error {
	if err := remote.WriteIndex(ref, idx, remoteOpts...); err != nil {
		return fmt.Errorf("pushing %s: %w", ref, err)
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s@%s\n", ref.Context().Name(), d)
	return nil
}
