// Package blob is the content-addressed store for raw payloads too large to keep in the
// graph: a directory (Dir) or an S3-compatible object store (S3, whose claims s3.go
// describes). A payload is named by the sha256 of its bytes and verified on every read.
//
// Payloads are shared by content, so one account's failed write must never remove a payload
// that another request is about to reference. Every Put therefore leaves a claim file beside
// the store until its writer's graph write has ended, and a removal skips claimed payloads.
// Claims are made and checked under an exclusive flock(2) on the payload's fan-out
// directory, held by Put from before its claim until the payload is on disk and by Remove
// from before its checks until the payload is gone: a Put either claims a payload before a
// removal looks (and the removal keeps it) or after the removal ended (and writes it anew).
// The locks and claims are files, so several ctxgraph processes sharing one directory on a
// local file system exclude each other too.
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
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// refPrefix starts every reference this store hands out.
const refPrefix = "sha256:"

// DefaultStaleAge is how old a claim or a temporary file must be before Refs takes it for
// the leftover of a crashed writer: far longer than any write request may run.
const DefaultStaleAge = 15 * time.Minute

// claimsDir holds the claims, named "<hex>.<random>", one per writer of a payload.
const claimsDir = "claims"

// tempPrefix starts the names of payloads being written.
const tempPrefix = ".put-"

// Dir stores payloads as files under a root directory, fanned out by the first two hex
// digits of their hash.
type Dir struct {
	root string
	// StaleAge is the age past which a claim or temporary file is a crashed writer's
	// leftover.
	StaleAge time.Duration
}

var _ model.BlobStore = (*Dir)(nil)

// Open returns a store rooted at root, creating the directory when needed.
func Open(root string) (*Dir, error) {
	if err := os.MkdirAll(filepath.Join(root, claimsDir), 0o750); err != nil {
		return nil, fmt.Errorf("blob store %s: %w", root, err)
	}
	return &Dir{root: root, StaleAge: DefaultStaleAge}, nil
}

// Ref returns the reference of data without storing it.
func Ref(data []byte) string {
	sum := sha256.Sum256(data)
	return refPrefix + hex.EncodeToString(sum[:])
}

// Put claims the payload, then stores data under its hash unless it is stored already. The
// file is written to a temporary name and renamed, so a reader never sees a partial payload.
func (d *Dir) Put(_ context.Context, data []byte) (string, func(), error) {
	ref := Ref(data)
	path, err := d.path(ref)
	if err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return "", nil, unwritable(err)
	}
	unlock, err := lockDir(filepath.Dir(path))
	if err != nil {
		return "", nil, err
	}
	defer unlock()
	claim, err := d.claim(path)
	if err != nil {
		return "", nil, err
	}
	release := func() { _ = os.Remove(claim) }
	if _, err := os.Stat(path); err == nil {
		return ref, release, nil
	}
	if err := writeFile(path, data); err != nil {
		release()
		return "", nil, err
	}
	return ref, release, nil
}

// claim creates the claim file of the payload at path and returns its name.
func (d *Dir) claim(path string) (string, error) {
	name := filepath.Join(d.root, claimsDir, filepath.Base(path)+"."+randomSuffix())
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
	if err != nil {
		return "", unwritable(err)
	}
	if err := f.Close(); err != nil {
		return "", unwritable(err)
	}
	return name, nil
}

// writeFile writes data durably to a temporary file beside path and renames it to path.
func writeFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), tempPrefix+"*")
	if err != nil {
		return unwritable(err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return unwritable(err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return unwritable(err)
	}
	if err := tmp.Close(); err != nil {
		return unwritable(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return unwritable(err)
	}
	return nil
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
		return nil, unreadable(err)
	}
	return verified(ref, data)
}

// verified returns data when it hashes to ref; a payload changed behind the store's back
// is KindInternal.
func verified(ref string, data []byte) ([]byte, error) {
	if got := Ref(data); got != ref {
		return nil, model.Internal("blob failed its hash check", fmt.Errorf("blob %s hashes to %s", ref, got))
	}
	return data, nil
}

// Remove locks the fan-out directories of refs in one order (so that two removals never
// wait on each other), leaves out the claimed payloads, asks unreferenced about the rest and
// deletes what it answers.
func (d *Dir) Remove(ctx context.Context, refs []string, unreferenced func(context.Context, []string) ([]string, error)) error {
	paths := map[string]string{}
	dirs := map[string]bool{}
	for _, ref := range refs {
		path, err := d.path(ref)
		if err != nil {
			return err
		}
		paths[ref] = path
		dirs[filepath.Dir(path)] = true
	}
	if len(paths) == 0 {
		return nil
	}
	ordered := make([]string, 0, len(dirs))
	for dir := range dirs {
		ordered = append(ordered, dir)
	}
	sort.Strings(ordered)
	for _, dir := range ordered {
		unlock, err := lockDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			// Nothing was ever stored there, and nothing is to be removed: a Put that makes
			// the directory now is not excluded by a lock, so its payload must not be
			// deleted after the checks below.
			for ref, path := range paths {
				if filepath.Dir(path) == dir {
					delete(paths, ref)
				}
			}
			continue
		}
		if err != nil {
			return err
		}
		defer unlock()
	}
	claimed, err := d.claimedHashes()
	if err != nil {
		return err
	}
	var candidates []string
	for ref, path := range paths {
		if !claimed[filepath.Base(path)] {
			candidates = append(candidates, ref)
		}
	}
	if len(candidates) == 0 {
		return nil
	}
	sort.Strings(candidates)
	orphans, err := unreferenced(ctx, candidates)
	if err != nil {
		return err
	}
	for _, ref := range orphans {
		path, ok := paths[ref]
		if !ok {
			continue
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return unwritable(err)
		}
	}
	return nil
}

// claimedHashes returns the hashes that a live claim holds.
func (d *Dir) claimedHashes() (map[string]bool, error) {
	entries, err := os.ReadDir(filepath.Join(d.root, claimsDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, model.Unavailable("blob store cannot be read", err)
	}
	out := map[string]bool{}
	for _, e := range entries {
		if hash, _, ok := strings.Cut(e.Name(), "."); ok {
			out[hash] = true
		}
	}
	return out, nil
}

// Refs walks the fan-out directories. Claims and temporary files older than StaleAge are
// removed on the way: their writers died, since no write runs that long.
func (d *Dir) Refs(_ context.Context) ([]string, error) {
	staleBefore := time.Now().Add(-d.StaleAge)
	removeIfStale := func(path string, e fs.DirEntry) {
		if info, err := e.Info(); err == nil && info.ModTime().Before(staleBefore) {
			_ = os.Remove(path)
		}
	}
	claims, err := os.ReadDir(filepath.Join(d.root, claimsDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, model.Unavailable("blob store cannot be read", err)
	}
	for _, e := range claims {
		removeIfStale(filepath.Join(d.root, claimsDir, e.Name()), e)
	}
	fans, err := os.ReadDir(d.root)
	if err != nil {
		return nil, model.Unavailable("blob store cannot be read", err)
	}
	var refs []string
	for _, fan := range fans {
		if !fan.IsDir() || len(fan.Name()) != 2 {
			continue
		}
		entries, err := os.ReadDir(filepath.Join(d.root, fan.Name()))
		if err != nil {
			return nil, model.Unavailable("blob store cannot be read", err)
		}
		for _, e := range entries {
			name := e.Name()
			switch {
			case strings.HasPrefix(name, tempPrefix):
				removeIfStale(filepath.Join(d.root, fan.Name(), name), e)
			case len(name) == sha256.Size*2 && strings.HasPrefix(name, fan.Name()):
				refs = append(refs, refPrefix+name)
			}
		}
	}
	return refs, nil
}

// lockDir takes an exclusive flock on dir and returns its release.
func lockDir(dir string) (func(), error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, unwritable(err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, unwritable(err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

func unwritable(err error) error { return model.Unavailable("blob store cannot be written", err) }

// path maps a reference to its file, refusing anything that is not a sha256 reference so
// that no reference can name a path outside the store.
func (d *Dir) path(ref string) (string, error) {
	hexSum, err := hexOf(ref)
	if err != nil {
		return "", err
	}
	return filepath.Join(d.root, hexSum[:2], hexSum), nil
}
