// Package blob is the content-addressed store on disk for raw payloads too large to keep in
// the graph. A payload is named by the sha256 of its bytes and verified on every read.
package blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxgraph/ctxgraph/model"
)

// refPrefix starts every reference this store hands out.
const refPrefix = "sha256:"

// Dir stores payloads as files under a root directory, fanned out by the first two hex
// digits of their hash.
type Dir struct {
	root string
}

var _ model.BlobStore = (*Dir)(nil)

// Open returns a store rooted at root, creating the directory when needed.
func Open(root string) (*Dir, error) {
	if err := os.MkdirAll(root, 0o750); err != nil {
		return nil, fmt.Errorf("blob store %s: %w", root, err)
	}
	return &Dir{root: root}, nil
}

// Ref returns the reference of data without storing it.
func Ref(data []byte) string {
	sum := sha256.Sum256(data)
	return refPrefix + hex.EncodeToString(sum[:])
}

// Put stores data under its hash. The file is written to a temporary name and renamed, so a
// reader never sees a partial payload.
func (d *Dir) Put(_ context.Context, data []byte) (string, error) {
	ref := Ref(data)
	path, err := d.path(ref)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(path); err == nil {
		return ref, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return "", model.Unavailable("blob store cannot be written", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".put-*")
	if err != nil {
		return "", model.Unavailable("blob store cannot be written", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", model.Unavailable("blob store cannot be written", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", model.Unavailable("blob store cannot be written", err)
	}
	if err := tmp.Close(); err != nil {
		return "", model.Unavailable("blob store cannot be written", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", model.Unavailable("blob store cannot be written", err)
	}
	return ref, nil
}

// Get reads the payload of ref and checks that its bytes still hash to ref.
func (d *Dir) Get(_ context.Context, ref string) ([]byte, error) {
	path, err := d.path(ref)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, model.NotFound("blob", ref)
	}
	if err != nil {
		return nil, model.Unavailable("blob store cannot be read", err)
	}
	if got := Ref(data); got != ref {
		return nil, model.Internal("blob failed its hash check", fmt.Errorf("blob %s hashes to %s", ref, got))
	}
	return data, nil
}

// Delete removes the payload of ref.
func (d *Dir) Delete(_ context.Context, ref string) error {
	path, err := d.path(ref)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return model.Unavailable("blob store cannot be written", err)
	}
	return nil
}

// path maps a reference to its file, refusing anything that is not a sha256 reference so
// that no reference can name a path outside the store.
func (d *Dir) path(ref string) (string, error) {
	hexSum, ok := strings.CutPrefix(ref, refPrefix)
	if !ok || len(hexSum) != sha256.Size*2 {
		return "", model.Internal("malformed blob reference", fmt.Errorf("ref %q", ref))
	}
	if _, err := hex.DecodeString(hexSum); err != nil {
		return "", model.Internal("malformed blob reference", fmt.Errorf("ref %q", ref))
	}
	return filepath.Join(d.root, hexSum[:2], hexSum), nil
}
