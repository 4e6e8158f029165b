package blob

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// unreferencedAll answers that no record references any of refs, and counts its calls.
func unreferencedAll(calls *int) func(context.Context, []string) ([]string, error) {
	return func(_ context.Context, refs []string) ([]string, error) {
		*calls++
		return refs, nil
	}
}

func TestPutGetVerifiesHash(t *testing.T) {
	ctx := context.Background()
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("row,1,2,3\n"), 40000)
	ref, release, err := d.Put(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if !strings.HasPrefix(ref, "sha256:") || len(ref) != 7+64 {
		t.Fatalf("got ref %q, want sha256:<64 hex>", ref)
	}
	again, release, err := d.Put(ctx, data)
	if err != nil || again != ref {
		t.Fatalf("second Put got (%q, %v), want (%q, nil)", again, err, ref)
	}
	release()
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

	var calls int
	if err := d.Remove(ctx, []string{ref}, unreferencedAll(&calls)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get(ctx, ref); model.KindOf(err) != model.KindNotFound {
		t.Fatalf("Get after Remove got %v, want kind not_found", err)
	}
	if err := d.Remove(ctx, []string{ref}, unreferencedAll(&calls)); err != nil {
		t.Fatalf("second Remove got %v, want nil", err)
	}
}

// A claimed payload survives a removal that the graph would allow, and once released the
// same removal takes it; what the graph still references stays whatever the claims.
func TestRemoveLeavesClaimedAndReferencedPayloads(t *testing.T) {
	ctx := context.Background()
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	claimed, releaseClaimed, err := d.Put(ctx, []byte("claimed payload"))
	if err != nil {
		t.Fatal(err)
	}
	held, releaseHeld, err := d.Put(ctx, []byte("referenced payload"))
	if err != nil {
		t.Fatal(err)
	}
	releaseHeld()
	var asked [][]string
	onlyClaimedIsFree := func(_ context.Context, refs []string) ([]string, error) {
		asked = append(asked, append([]string{}, refs...))
		var out []string
		for _, r := range refs {
			if r != held {
				out = append(out, r)
			}
		}
		return out, nil
	}
	if err := d.Remove(ctx, []string{claimed, held}, onlyClaimedIsFree); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{claimed, held} {
		if _, err := d.Get(ctx, ref); err != nil {
			t.Errorf("Get(%s) after Remove: got %v, want the payload kept", ref, err)
		}
	}
	if len(asked) != 1 || len(asked[0]) != 1 || asked[0][0] != held {
		t.Errorf("got the graph asked about %v, want only the unclaimed %s", asked, held)
	}

	releaseClaimed()
	if err := d.Remove(ctx, []string{claimed, held}, onlyClaimedIsFree); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get(ctx, claimed); model.KindOf(err) != model.KindNotFound {
		t.Errorf("released, unreferenced payload: got %v, want it removed", err)
	}
	if _, err := d.Get(ctx, held); err != nil {
		t.Errorf("referenced payload: got %v, want it kept", err)
	}
}

// Two writers of one payload: the first one's release does not end the second one's claim.
func TestClaimsOfOnePayloadAreSeparate(t *testing.T) {
	ctx := context.Background()
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ref, first, _ := d.Put(ctx, []byte("shared body"))
	_, second, _ := d.Put(ctx, []byte("shared body"))
	first()
	var calls int
	if err := d.Remove(ctx, []string{ref}, unreferencedAll(&calls)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get(ctx, ref); err != nil {
		t.Fatalf("got %v while the second writer holds its claim, want the payload kept", err)
	}
	second()
	if err := d.Remove(ctx, []string{ref}, unreferencedAll(&calls)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get(ctx, ref); model.KindOf(err) != model.KindNotFound {
		t.Fatalf("got %v after both released, want the payload removed", err)
	}
}

// Refs lists every payload and clears stale claims and temporary files, keeping fresh ones.
func TestRefsClearsWhatCrashedWritersLeft(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	stale, _, _ := d.Put(ctx, []byte("a writer that died"))
	fresh, _, _ := d.Put(ctx, []byte("a writer still running"))
	stalePath, _ := d.path(stale)
	tmp := filepath.Join(filepath.Dir(stalePath), tempPrefix+"123")
	if err := os.WriteFile(tmp, []byte("half"), 0o640); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * d.StaleAge)
	claims, _ := filepath.Glob(filepath.Join(root, claimsDir, strings.TrimPrefix(stale, refPrefix)+".*"))
	for _, f := range append(claims, tmp) {
		if err := os.Chtimes(f, old, old); err != nil {
			t.Fatal(err)
		}
	}
	refs, err := d.Refs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(refs)
	want := []string{stale, fresh}
	sort.Strings(want)
	if strings.Join(refs, ",") != strings.Join(want, ",") {
		t.Errorf("got refs %v, want %v", refs, want)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("stale temporary file: got %v, want it removed", err)
	}
	claimed, _ := d.claimedHashes()
	if claimed[strings.TrimPrefix(stale, refPrefix)] || !claimed[strings.TrimPrefix(fresh, refPrefix)] {
		t.Errorf("got claims %v, want only the fresh writer's", claimed)
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
