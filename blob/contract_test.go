package blob

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// backend is one kind of store under the contract tests, on storage of the test's own.
type backend struct {
	// open opens another store on the same storage, as another process would.
	open func(t *testing.T) model.BlobStore
	// tamper replaces the stored bytes of ref.
	tamper func(t *testing.T, ref string, data []byte)
	// leftovers lists what is stored besides payloads: claims, temporary files, removal
	// intents, trashed payloads.
	leftovers func(t *testing.T) []string
	// unreachable opens a store whose storage does not answer.
	unreachable func(t *testing.T) model.BlobStore
}

// wantNoLeftovers fails the test if anything besides payloads is stored.
func (b *backend) wantNoLeftovers(t *testing.T) {
	t.Helper()
	if left := b.leftovers(t); len(left) > 0 {
		t.Errorf("got %v left in the store, want nothing", left)
	}
}

// backends are the stores every contract test runs on.
var backends = []struct {
	name string
	new  func(t *testing.T) *backend
}{
	{"dir", newDirBackend},
	{"s3", newS3Backend},
}

// forEachBackend runs test once on each store.
func forEachBackend(t *testing.T, test func(t *testing.T, b *backend)) {
	for _, kind := range backends {
		t.Run(kind.name, func(t *testing.T) { test(t, kind.new(t)) })
	}
}

// setStaleAge sets the age past which the store takes claims for crashed writers'.
func setStaleAge(t *testing.T, store model.BlobStore, d time.Duration) {
	switch s := store.(type) {
	case *Dir:
		s.StaleAge = d
	case *S3:
		s.StaleAge = d
	default:
		t.Fatalf("no stale age on %T", store)
	}
}

// graph stands in for the records that reference payloads: what committed, under a lock.
type graph struct {
	mu  sync.Mutex
	ref map[string]bool
}

func (g *graph) commit(ref string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ref == nil {
		g.ref = map[string]bool{}
	}
	g.ref[ref] = true
}

func (g *graph) forget(ref string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.ref, ref)
}

// unreferenced answers those of refs that nothing committed references.
func (g *graph) unreferenced(_ context.Context, refs []string) ([]string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, r := range refs {
		if !g.ref[r] {
			out = append(out, r)
		}
	}
	return out, nil
}

// nothingReferenced answers that no record references any of refs.
func nothingReferenced(_ context.Context, refs []string) ([]string, error) { return refs, nil }

func mustPut(t *testing.T, s model.BlobStore, data []byte) (string, func()) {
	t.Helper()
	ref, release, err := s.Put(t.Context(), data)
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	return ref, release
}

func wantKind(t *testing.T, what string, err error, kind model.Kind) {
	t.Helper()
	if model.KindOf(err) != kind {
		t.Errorf("%s: got %v, want kind %s", what, err, kind)
	}
}

func TestPutGetVerifiesHash(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		ctx := t.Context()
		s := b.open(t)
		data := bytes.Repeat([]byte("row,1,2,3\n"), 40000)
		ref, release := mustPut(t, s, data)
		release()
		if !strings.HasPrefix(ref, "sha256:") || len(ref) != 7+64 || ref != Ref(data) {
			t.Fatalf("got ref %q, want %q", ref, Ref(data))
		}
		again, release := mustPut(t, s, data)
		release()
		if again != ref {
			t.Fatalf("second Put got %q, want %q", again, ref)
		}
		got, err := b.open(t).Get(ctx, ref)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("Get got %d bytes, %v; want %d bytes", len(got), err, len(data))
		}

		// Stored bytes that no longer hash to their name fail the read, never come back.
		b.tamper(t, ref, []byte("tampered"))
		_, err = s.Get(ctx, ref)
		wantKind(t, "Get of a tampered blob", err, model.KindInternal)

		if err := s.Remove(ctx, []string{ref}, nothingReferenced); err != nil {
			t.Fatal(err)
		}
		_, err = s.Get(ctx, ref)
		wantKind(t, "Get after Remove", err, model.KindNotFound)
		if err := s.Remove(ctx, []string{ref}, nothingReferenced); err != nil {
			t.Fatalf("second Remove got %v, want nil", err)
		}
		b.wantNoLeftovers(t)
	})
}

// A claimed payload survives a removal that the graph would allow, and once released the
// same removal takes it; what the graph still references stays whatever the claims.
func TestRemoveLeavesClaimedAndReferencedPayloads(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		ctx := t.Context()
		s := b.open(t)
		claimed, releaseClaimed := mustPut(t, s, []byte("claimed payload"))
		held, releaseHeld := mustPut(t, s, []byte("referenced payload"))
		releaseHeld()
		var asked []string
		onlyClaimedIsFree := func(_ context.Context, refs []string) ([]string, error) {
			asked = append(asked, refs...)
			return slices.DeleteFunc(slices.Clone(refs), func(r string) bool { return r == held }), nil
		}
		if err := b.open(t).Remove(ctx, []string{claimed, held}, onlyClaimedIsFree); err != nil {
			t.Fatal(err)
		}
		for _, ref := range []string{claimed, held} {
			if _, err := s.Get(ctx, ref); err != nil {
				t.Errorf("Get(%s) after Remove: got %v, want the payload kept", ref, err)
			}
		}
		if slices.Contains(asked, claimed) || !slices.Contains(asked, held) {
			t.Errorf("got the graph asked about %v, want only the unclaimed %s", asked, held)
		}

		releaseClaimed()
		if err := b.open(t).Remove(ctx, []string{claimed, held}, onlyClaimedIsFree); err != nil {
			t.Fatal(err)
		}
		_, err := s.Get(ctx, claimed)
		wantKind(t, "released, unreferenced payload", err, model.KindNotFound)
		if _, err := s.Get(ctx, held); err != nil {
			t.Errorf("referenced payload: got %v, want it kept", err)
		}
	})
}

// Two writers of one payload: the first one's release does not end the second one's claim.
func TestClaimsOfOnePayloadAreSeparate(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		ctx := t.Context()
		ref, first := mustPut(t, b.open(t), []byte("shared body"))
		_, second := mustPut(t, b.open(t), []byte("shared body"))
		first()
		s := b.open(t)
		if err := s.Remove(ctx, []string{ref}, nothingReferenced); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, ref); err != nil {
			t.Fatalf("got %v while the second writer holds its claim, want the payload kept", err)
		}
		second()
		if err := s.Remove(ctx, []string{ref}, nothingReferenced); err != nil {
			t.Fatal(err)
		}
		_, err := s.Get(ctx, ref)
		wantKind(t, "after both released", err, model.KindNotFound)
	})
}

// Refs lists every payload and clears the claims of writers that died (older than the stale
// age), keeping those of writers still running.
func TestRefsClearsStaleClaims(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		ctx := t.Context()
		s := b.open(t)
		setStaleAge(t, s, 2*time.Second)
		died, _ := mustPut(t, s, []byte("a writer that died"))
		time.Sleep(3 * time.Second)
		running, release := mustPut(t, s, []byte("a writer still running"))
		refs, err := s.Refs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(refs)
		want := []string{died, running}
		slices.Sort(want)
		if !slices.Equal(refs, want) {
			t.Errorf("got refs %v, want %v", refs, want)
		}
		if err := s.Remove(ctx, want, nothingReferenced); err != nil {
			t.Fatal(err)
		}
		_, err = s.Get(ctx, died)
		wantKind(t, "payload of the writer that died", err, model.KindNotFound)
		if _, err := s.Get(ctx, running); err != nil {
			t.Errorf("payload of the running writer: got %v, want it kept", err)
		}
		release()
		if err := s.Remove(ctx, want, nothingReferenced); err != nil {
			t.Fatal(err)
		}
		b.wantNoLeftovers(t)
	})
}

func TestRefusesRefsOutsideTheStore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s := b.open(t)
		for _, ref := range []string{"../../etc/passwd", "sha256:" + strings.Repeat("z", 64), "sha256:abc", "sha256:/../" + strings.Repeat("a", 60)} {
			_, err := s.Get(t.Context(), ref)
			wantKind(t, fmt.Sprintf("Get(%q)", ref), err, model.KindInternal)
			err = s.Remove(t.Context(), []string{ref}, nothingReferenced)
			wantKind(t, fmt.Sprintf("Remove(%q)", ref), err, model.KindInternal)
		}
	})
}

// A write that fails after its Put (the graph write did not commit) releases its claim and
// removes what nothing references: nothing is left, neither the payload nor a claim, an
// intent or a trashed copy. A removal whose graph check fails removes nothing and leaves
// nothing of its own.
func TestFailedWritesLeaveNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		ctx := t.Context()
		s := b.open(t)
		ref, release := mustPut(t, s, []byte("a result whose write failed"))
		neo4jAway := func(context.Context, []string) ([]string, error) {
			return nil, model.Unavailable("neo4j is away", nil)
		}
		if err := s.Remove(ctx, []string{ref}, neo4jAway); err != nil {
			t.Errorf("Remove of a claimed payload: got %v, want nil (no check needed)", err)
		}
		release()
		err := s.Remove(ctx, []string{ref}, neo4jAway)
		wantKind(t, "Remove while the graph check fails", err, model.KindUnavailable)
		if _, err := s.Get(ctx, ref); err != nil {
			t.Errorf("payload after a removal that could not check: got %v, want it kept", err)
		}
		if err := s.Remove(ctx, []string{ref}, nothingReferenced); err != nil {
			t.Fatal(err)
		}
		refs, err := s.Refs(ctx)
		if err != nil || len(refs) > 0 {
			t.Errorf("Refs got %v, %v; want none", refs, err)
		}
		b.wantNoLeftovers(t)
	})
}

// A store that does not answer answers unavailable, never not found.
func TestUnreachableStoreIsUnavailable(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		ctx := t.Context()
		s := b.unreachable(t)
		_, _, err := s.Put(ctx, []byte("payload"))
		wantKind(t, "Put", err, model.KindUnavailable)
		_, err = s.Get(ctx, Ref([]byte("payload")))
		wantKind(t, "Get", err, model.KindUnavailable)
		_, err = s.Refs(ctx)
		wantKind(t, "Refs", err, model.KindUnavailable)
		err = s.Remove(ctx, []string{Ref([]byte("payload"))}, nothingReferenced)
		wantKind(t, "Remove", err, model.KindUnavailable)
	})
}

// A writer that claims, writes, commits its reference and releases while a removal of the
// same payload runs its graph check (the worst moment: the check has said unreferenced and
// the removal has not yet deleted) never ends with its committed reference on a missing
// payload, whether the payload was stored before or not. The writer and the remover are
// separate store instances, as two processes are. The writer runs inside the n-th graph
// check; a store whose Put waits for the removal (the directory's lock) finishes its write
// after the removal instead.
func TestWriterDuringRemovalKeepsItsPayload(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		for _, storedBefore := range []bool{true, false} {
			for _, during := range []int{1, 2} {
				t.Run(fmt.Sprintf("stored before %v, check %d", storedBefore, during), func(t *testing.T) {
					writerDuringRemoval(t, b, storedBefore, during)
				})
			}
		}
	})
}

func writerDuringRemoval(t *testing.T, b *backend, storedBefore bool, during int) {
	ctx := t.Context()
	data := []byte("a body two accounts write: " + randomSuffix())
	ref := Ref(data)
	if storedBefore {
		_, release := mustPut(t, b.open(t), data)
		release()
	}
	var g graph
	writer, remover := b.open(t), b.open(t)
	done := make(chan error, 1)
	calls := 0
	check := func(ctx context.Context, refs []string) ([]string, error) {
		answer, _ := g.unreferenced(ctx, refs)
		if calls++; calls != during {
			return answer, nil
		}
		go func() {
			ref, release, err := writer.Put(ctx, data)
			if err == nil {
				g.commit(ref)
				release()
			}
			done <- err
		}()
		select {
		case err := <-done:
			done <- err
		case <-time.After(500 * time.Millisecond):
		}
		return answer, nil
	}
	if err := remover.Remove(ctx, []string{ref}, check); err != nil {
		t.Fatal(err)
	}
	if calls < during {
		t.Skipf("the store checked the graph %d times: no check %d to write during", calls, during)
	}
	if err := <-done; err != nil {
		t.Fatalf("the writer's Put: %v", err)
	}
	if _, err := b.open(t).Get(ctx, ref); err != nil {
		t.Fatalf("Get of the committed payload after the removal: got %v, want it", err)
	}
	b.wantNoLeftovers(t)
}

// Writers and removers of the same payloads race on separate store instances: a payload
// whose reference committed is always there afterwards, and once nothing references
// anything, one removal leaves the store empty.
func TestConcurrentPutAndRemove(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		ctx := t.Context()
		var g graph
		const rounds, payloads = 24, 3
		bodies := make([][]byte, payloads)
		for i := range bodies {
			bodies[i] = []byte(fmt.Sprintf("shared body %d %s", i, randomSuffix()))
		}
		var lost []string
		for round := range rounds {
			body := bodies[round%payloads]
			ref := Ref(body)
			g.forget(ref)
			var wg sync.WaitGroup
			writerDone := make(chan struct{})
			wg.Go(func() {
				defer close(writerDone)
				w := b.open(t)
				time.Sleep(time.Duration(rand.IntN(4000)) * time.Microsecond)
				ref, release, err := w.Put(ctx, body)
				if err != nil {
					t.Errorf("Put: %v", err)
					return
				}
				time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
				g.commit(ref)
				release()
			})
			for range 2 {
				wg.Go(func() {
					r := b.open(t)
					for {
						if err := r.Remove(ctx, []string{ref}, g.unreferenced); err != nil {
							t.Errorf("Remove: %v", err)
						}
						select {
						case <-writerDone:
							return
						default:
						}
					}
				})
			}
			wg.Wait()
			if _, err := b.open(t).Get(ctx, ref); err != nil {
				lost = append(lost, fmt.Sprintf("round %d: %v", round, err))
			}
		}
		if len(lost) > 0 {
			t.Errorf("%d of %d committed payloads lost: %v", len(lost), rounds, lost)
		}
		s := b.open(t)
		refs := make([]string, payloads)
		for i, body := range bodies {
			refs[i] = Ref(body)
			g.forget(refs[i])
		}
		if err := s.Remove(ctx, refs, g.unreferenced); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Refs(ctx); err != nil || len(got) > 0 {
			t.Errorf("Refs after removing everything: got %v, %v; want none", got, err)
		}
		b.wantNoLeftovers(t)
	})
}
