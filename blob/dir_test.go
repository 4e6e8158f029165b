package blob

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxgraph/ctxgraph/model"
)

func TestPutGetVerifiesHash(t *testing.T) {
	ctx := context.Background()
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("row,1,2,3\n"), 40000)
	ref, err := d.Put(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ref, "sha256:") || len(ref) != 7+64 {
		t.Fatalf("got ref %q, want sha256:<64 hex>", ref)
	}
	again, err := d.Put(ctx, data)
	if err != nil || again != ref {
		t.Fatalf("second Put got (%q, %v), want (%q, nil)", again, err, ref)
	}
	got, err := d.Get(ctx, ref)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Get got %d bytes, %v; want %d bytes", len(got), err, len(data))
	}

	// Corrupt the file on disk: the read must fail its hash check, not return the bytes.
	path, _ := d.path(ref)
	if err := os.WriteFile(path, []byte("tampered"), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get(ctx, ref); model.KindOf(err) != model.KindInternal {
		t.Fatalf("Get of a tampered blob got %v, want kind internal", err)
	}

	if err := d.Delete(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get(ctx, ref); model.KindOf(err) != model.KindNotFound {
		t.Fatalf("Get after Delete got %v, want kind not_found", err)
	}
	if err := d.Delete(ctx, ref); err != nil {
		t.Fatalf("second Delete got %v, want nil", err)
	}
}

func TestRefusesRefsOutsideTheStore(t *testing.T) {
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"../../etc/passwd", "sha256:" + strings.Repeat("z", 64), "sha256:abc", filepath.Join("sha256:", "..")} {
		if _, err := d.Get(context.Background(), ref); model.KindOf(err) != model.KindInternal {
			t.Errorf("Get(%q) got %v, want kind internal", ref, err)
		}
	}
}
