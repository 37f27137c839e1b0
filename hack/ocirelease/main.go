// Command ocirelease builds and pushes the project's base image: the one
// piece of the release no standard tool makes. ko (make release) builds the
// image of the binary on top of it, but needs a base; crane and apko either
// need a hand-written reproducible tar or a package repository; a Dockerfile
// needs a container engine and a base of its own. This writes the layer and
// the JSON itself (github.com/google/go-containerregistry), and runs nothing.
//
//	ocirelease base -tag REGISTRY/k8s-gateway-base:TAG
//	    a minimal base for linux/amd64 and linux/arm64: the Mozilla root
//	    CA bundle of the pinned golang.org/x/crypto/x509roots/fallback module
//	    (go.sum), /etc/passwd and /etc/group with nonroot (65532), /tmp;
//	    every time in it is SOURCE_DATE_EPOCH (default 0). Its bytes depend
//	    only on this module's sources and go.sum: the same digest whoever
//	    builds it. Prints REGISTRY/k8s-gateway-base@sha256:...
//
// It is a module of its own so that the plugin's go.mod never grows.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != "base" {
		fmt.Fprintln(os.Stderr, "usage: ocirelease base -tag REGISTRY/NAME:TAG (see the package comment)")
		os.Exit(2)
	}
	if err := runBase(os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "ocirelease:", err)
		os.Exit(1)
	}
}

// created is the time every file and config of the base carries:
// SOURCE_DATE_EPOCH, else the Unix epoch.
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
	idx, err := baseIndex(caBundle(), when)
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
