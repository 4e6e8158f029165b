package blob

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// newDirBackend is the directory store on a directory of the test's own.
func newDirBackend(t *testing.T) *backend {
	root := t.TempDir()
	open := func(t *testing.T) model.BlobStore {
		d, err := Open(root)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	return &backend{
		open: open,
		tamper: func(t *testing.T, ref string, data []byte) {
			path, err := open(t).(*Dir).path(ref)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o640); err != nil {
				t.Fatal(err)
			}
		},
		leftovers: func(t *testing.T) []string {
			var out []string
			err := filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
				if err != nil || e.IsDir() {
					return err
				}
				if name := e.Name(); strings.HasPrefix(name, tempPrefix) || filepath.Base(filepath.Dir(path)) == claimsDir {
					out = append(out, path)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return out
		},
		unreachable: func(t *testing.T) model.BlobStore {
			gone := filepath.Join(t.TempDir(), "store")
			d, err := Open(gone)
			if err != nil {
				t.Fatal(err)
			}
			// The store's directory is replaced by a file: nothing under it can be read or
			// written (a permission would not stop root).
			if err := os.RemoveAll(gone); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(gone, nil, 0o640); err != nil {
				t.Fatal(err)
			}
			return d
		},
	}
}

// Refs clears the temporary files of writers that died, keeping fresh ones.
func TestDirRefsClearsStaleTemporaryFiles(t *testing.T) {
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ref, release := mustPut(t, d, []byte("a payload"))
	release()
	path, _ := d.path(ref)
	stale := filepath.Join(filepath.Dir(path), tempPrefix+"123")
	fresh := filepath.Join(filepath.Dir(path), tempPrefix+"456")
	for _, f := range []string{stale, fresh} {
		if err := os.WriteFile(f, []byte("half"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * d.StaleAge)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	refs, err := d.Refs(t.Context())
	if err != nil || !slices.Equal(refs, []string{ref}) {
		t.Errorf("got refs %v, %v; want [%s]", refs, err, ref)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary file: got %v, want it removed", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh temporary file: got %v, want it kept", err)
	}
}
