//go:build release

package image_test

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// archive is a docker-archive read back the way a container runtime imports it: manifest.json
// names the config and the layers, and the layers stacked (whiteouts applied) are the rootfs.
type archive struct {
	repoTags []string
	configID string // the config blob's sha256: buildah's image ID
	config   imageConfig
	rootfs   map[string]*tar.Header // absolute path → the top layer's entry
	layers   int
	size     int64 // bytes of the layer tars as stored in the archive
	gzipSize int64 // bytes of the layer tars gzip-compressed, as a registry holds them
}

// imageConfig is the part of the OCI/Docker image config the tests check.
type imageConfig struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Config       struct {
		User         string              `json:"User"`
		Entrypoint   []string            `json:"Entrypoint"`
		Cmd          []string            `json:"Cmd"`
		ExposedPorts map[string]struct{} `json:"ExposedPorts"`
		Labels       map[string]string   `json:"Labels"`
		WorkingDir   string              `json:"WorkingDir"`
	} `json:"config"`
}

// readArchive reads the docker-archive at file: it opens the outer tar once per member it
// needs, since a docker-archive's members may come in any order.
func readArchive(file string) (*archive, error) {
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := readMember(file, "manifest.json", func(r io.Reader) error { return json.NewDecoder(r).Decode(&manifest) }); err != nil {
		return nil, err
	}
	if len(manifest) != 1 {
		return nil, fmt.Errorf("%s holds %d images, want 1", file, len(manifest))
	}
	m := manifest[0]
	a := &archive{repoTags: m.RepoTags, rootfs: map[string]*tar.Header{}, layers: len(m.Layers)}
	a.configID = strings.TrimSuffix(path.Base(m.Config), ".json")
	if err := readMember(file, m.Config, func(r io.Reader) error { return json.NewDecoder(r).Decode(&a.config) }); err != nil {
		return nil, err
	}
	for _, l := range m.Layers {
		err := readMember(file, l, func(r io.Reader) error {
			n, gz, err := a.applyLayer(r)
			a.size += n
			a.gzipSize += gz
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("layer %s: %w", l, err)
		}
	}
	return a, nil
}

// readMember calls fn with the content of the outer tar's member name.
func readMember(file, name string, fn func(io.Reader) error) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return fmt.Errorf("%s has no member %s", file, name)
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", file, err)
		}
		if path.Clean(h.Name) == path.Clean(name) {
			return fn(tr)
		}
	}
}

// applyLayer stacks one layer tar (plain or gzip) onto the rootfs and returns its stored size
// and its size gzip-compressed (what a registry would store and a node would pull).
func (a *archive) applyLayer(r io.Reader) (stored, compressed int64, err error) {
	cr := &countingWriter{}
	br := bufio.NewReader(io.TeeReader(r, cr))
	var lr io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		if lr, err = gzip.NewReader(br); err != nil {
			return 0, 0, err
		}
	}
	gzc := &countingWriter{}
	gz := gzip.NewWriter(gzc)
	tr := tar.NewReader(io.TeeReader(lr, gz))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, 0, err
		}
		a.apply(h)
	}
	if _, err := io.Copy(io.Discard, br); err != nil { // the tar's trailing padding
		return 0, 0, err
	}
	if err := gz.Close(); err != nil {
		return 0, 0, err
	}
	return cr.n, gzc.n, nil
}

// apply adds one layer entry to the rootfs, or removes what a whiteout entry hides.
func (a *archive) apply(h *tar.Header) {
	p := path.Join("/", h.Name)
	dir, base := path.Split(p)
	hidden := ""
	switch {
	case base == ".wh..wh..opq": // an opaque dir: the lower layers' contents are gone
		hidden = path.Clean(dir) + "/"
	case strings.HasPrefix(base, ".wh."):
		hidden = path.Join(dir, strings.TrimPrefix(base, ".wh."))
		delete(a.rootfs, hidden)
		hidden += "/"
	default:
		a.rootfs[p] = h
		return
	}
	for k := range a.rootfs {
		if strings.HasPrefix(k, hidden) {
			delete(a.rootfs, k)
		}
	}
}

// countingWriter counts what is written to it.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}
