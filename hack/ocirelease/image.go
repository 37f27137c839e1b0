package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"maps"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The user, entrypoint and ports of the Dockerfile's image.
const (
	nonroot    = "65532:65532"
	entrypoint = "/coredns"
)

var basePlatforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}

// entry is one file or directory of a layer.
type entry struct {
	name     string
	mode     int64
	uid, gid int
	data     []byte // nil: a directory
}

// layer writes entries as an OCI layer whose bytes depend only on them and on when.
func layer(entries []entry, when time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: when, Format: tar.FormatPAX}
		if e.data == nil {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// baseIndex is the minimal base: CA certificates and the users of a
// distroless static nonroot image, one layer shared by every platform.
func baseIndex(caFile string, when time.Time) (v1.ImageIndex, error) {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("the CA bundle: %w", err)
	}
	l, err := layer([]entry{
		{name: "etc/", mode: 0o755},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\n" +
			"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n")},
		{name: "etc/ssl/", mode: 0o755},
		{name: "etc/ssl/certs/", mode: 0o755},
		{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: ca},
		{name: "home/", mode: 0o755},
		{name: "home/nonroot/", mode: 0o700, uid: 65532, gid: 65532},
		{name: "tmp/", mode: 0o1777},
	}, when)
	if err != nil {
		return nil, err
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range basePlatforms {
		img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
		img, err = mutate.Append(img, mutate.Addendum{Layer: l, History: v1.History{Created: v1.Time{Time: when},
			CreatedBy: "ocirelease base", Comment: "CA certificates, /etc/passwd and /etc/group with nonroot (65532)"}})
		if err != nil {
			return nil, err
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		cfg = cfg.DeepCopy()
		cfg.OS, cfg.Architecture, cfg.Created = p.OS, p.Architecture, v1.Time{Time: when}
		cfg.Config = v1.Config{User: nonroot, WorkingDir: "/home/nonroot", Env: []string{
			"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}}
		if img, err = mutate.ConfigFile(img, cfg); err != nil {
			return nil, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	return idx, nil
}

// releaseIndex puts each platform's binary on that platform's base image.
func releaseIndex(base name.Digest, bins map[string]string, order []string, labels map[string]string, when time.Time) (v1.ImageIndex, error) {
	desc, err := remote.Get(base, remoteOpts...)
	if err != nil {
		return nil, fmt.Errorf("the base %s: %w", base, err)
	}
	annotations := maps.Clone(labels)
	annotations["org.opencontainers.image.created"] = when.Format(time.RFC3339)
	annotations["org.opencontainers.image.base.name"] = base.Context().Name()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, plat := range order {
		p, err := v1.ParsePlatform(plat)
		if err != nil {
			return nil, err
		}
		baseImg, err := platformImage(desc, *p)
		if err != nil {
			return nil, err
		}
		img, err := withBinary(baseImg, *p, bins[plat], labels, when)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", plat, err)
		}
		baseDigest, err := baseImg.Digest()
		if err != nil {
			return nil, err
		}
		ann := maps.Clone(annotations)
		ann["org.opencontainers.image.base.digest"] = baseDigest.String()
		img = mutate.Annotations(img, ann).(v1.Image)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: p}})
	}
	return mutate.Annotations(idx, annotations).(v1.ImageIndex), nil
}

// platformImage is the image of p in the base (an index, or one image of p).
func platformImage(desc *remote.Descriptor, p v1.Platform) (v1.Image, error) {
	if !desc.MediaType.IsIndex() {
		img, err := desc.Image()
		if err != nil {
			return nil, err
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		if cfg.OS != p.OS || cfg.Architecture != p.Architecture {
			return nil, fmt.Errorf("the base is one image for %s/%s, not an index with %s", cfg.OS, cfg.Architecture, p)
		}
		return img, nil
	}
	idx, err := desc.ImageIndex()
	if err != nil {
		return nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, m := range im.Manifests {
		if m.Platform != nil && m.Platform.OS == p.OS && m.Platform.Architecture == p.Architecture &&
			(p.Variant == "" || m.Platform.Variant == p.Variant) {
			return idx.Image(m.Digest)
		}
	}
	return nil, fmt.Errorf("the base has no image for %s", p)
}

// elfMachines: the ELF machine of each architecture's binary.
var elfMachines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// withBinary adds file as /coredns and sets the Dockerfile's user, entrypoint and ports.
func withBinary(base v1.Image, p v1.Platform, file string, labels map[string]string, when time.Time) (v1.Image, error) {
	f, err := elf.Open(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	machine := f.Machine
	f.Close()
	if want, ok := elfMachines[p.Architecture]; !ok || machine != want {
		return nil, fmt.Errorf("%s is built for %s, not %s", file, machine, p.Architecture)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	l, err := layer([]entry{{name: "coredns", mode: 0o755, data: data}}, when)
	if err != nil {
		return nil, err
	}
	img, err := mutate.Append(base, mutate.Addendum{Layer: l, History: v1.History{Created: v1.Time{Time: when},
		CreatedBy: "ocirelease image", Comment: "CoreDNS with the k8s_gateway plugin as /coredns"}})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	if cfg.OS != p.OS || cfg.Architecture != p.Architecture {
		return nil, fmt.Errorf("the base's image for %s is configured for %s/%s", p, cfg.OS, cfg.Architecture)
	}
	cfg = cfg.DeepCopy()
	cfg.Created = v1.Time{Time: when}
	cfg.Config.User = nonroot
	cfg.Config.Entrypoint, cfg.Config.Cmd = []string{entrypoint}, nil
	cfg.Config.ExposedPorts = map[string]struct{}{"1053/udp": {}, "1053/tcp": {}}
	if cfg.Config.Labels == nil {
		cfg.Config.Labels = map[string]string{}
	}
	maps.Copy(cfg.Config.Labels, labels)
	return mutate.ConfigFile(img, cfg)
}
