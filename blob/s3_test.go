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

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ctxgraph/ctxgraph/integration/s3test"
	"github.com/ctxgraph/ctxgraph/model"
)

// s3Server finds the tests' S3 server; without one the test fails, as `make test` starts it.
func s3Server(t *testing.T) s3test.Server {
	t.Helper()
	srv, err := s3test.Find()
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// newS3Backend is the S3 store on a prefix of the test's own in the tests' bucket.
func newS3Backend(t *testing.T) *backend {
	srv := s3Server(t)
	location := srv.NewLocation("blob-test")
	_, prefix, err := ParseS3URL(location)
	if err != nil {
		t.Fatal(err)
	}
	client, err := srv.Client(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.DeleteAll(context.Background(), client, prefix) })
	open := func(t *testing.T) model.BlobStore { return openTestS3(t, srv, location) }
	return &backend{
		open: open,
		tamper: func(t *testing.T, ref string, data []byte) {
			h, err := hexOf(ref)
			if err != nil {
				t.Fatal(err)
			}
			key := prefix + h[:2] + "/" + h
			if _, err := client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: &srv.Bucket, Key: &key, Body: bytes.NewReader(data)}); err != nil {
				t.Fatal(err)
			}
		},
		leftovers: func(t *testing.T) []string {
			keys, err := srv.Keys(t.Context(), client, prefix)
			if err != nil {
				t.Fatal(err)
			}
			return slices.DeleteFunc(keys, func(k string) bool {
				fan, h, ok := strings.Cut(strings.TrimPrefix(k, prefix), "/")
				return ok && len(fan) == 2 && len(h) == 64
			})
		},
		unreachable: func(t *testing.T) model.BlobStore {
			dead := srv
			dead.Endpoint = "http://127.0.0.1:1"
			return openTestS3(t, dead, location, config.WithRetryMaxAttempts(1))
		},
	}
}

func openTestS3(t *testing.T, srv s3test.Server, location string, more ...func(*config.LoadOptions) error) *S3 {
	t.Helper()
	s, err := OpenS3(t.Context(), location, append(srv.Options(), more...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseS3URL(t *testing.T) {
	for _, tc := range []struct {
		in, bucket, prefix string
		bad                bool
	}{
		{in: "s3://blobs", bucket: "blobs"},
		{in: "s3://blobs/", bucket: "blobs"},
		{in: "s3://blobs/ctxgraph", bucket: "blobs", prefix: "ctxgraph/"},
		{in: "s3://blobs/a/b/", bucket: "blobs", prefix: "a/b/"},
		{in: "s3:///nobucket", bad: true},
		{in: "file:///var/blobs", bad: true},
		{in: "/var/blobs", bad: true},
		{in: "s3://blobs/p?region=eu", bad: true},
		{in: "s3://key:secret@blobs/p", bad: true},
	} {
		bucket, prefix, err := ParseS3URL(tc.in)
		if (err != nil) != tc.bad || bucket != tc.bucket || prefix != tc.prefix {
			t.Errorf("ParseS3URL(%q) got (%q, %q, %v), want (%q, %q, error %v)", tc.in, bucket, prefix, err, tc.bucket, tc.prefix, tc.bad)
		}
	}
}

// A bucket that is not there, or credentials the server refuses, fail at open: that is a
// configuration error, not an outage.
func TestOpenS3RefusesAMissingBucketAndBadCredentials(t *testing.T) {
	srv := s3Server(t)
	if _, err := OpenS3(t.Context(), "s3://no-such-bucket-"+randomSuffix()+"/p", srv.Options()...); err == nil {
		t.Error("OpenS3 of a missing bucket: got nil, want an error")
	}
	wrong := srv
	wrong.SecretKey = "not-the-secret"
	if _, err := OpenS3(t.Context(), "s3://"+srv.Bucket+"/p", wrong.Options()...); err == nil {
		t.Error("OpenS3 with a wrong secret: got nil, want an error")
	}
}

// A removal that died after moving a payload to the trash (before putting it back or
// deleting the trash) loses nothing: Get reads the trashed copy meanwhile, and once the copy
// is stale Refs puts it back and lists it, for the sweep to judge. Stale removal intents go.
func TestS3RefsRestoresWhatDeadRemovalsLeft(t *testing.T) {
	srv := s3Server(t)
	b := newS3Backend(t)
	s := b.open(t).(*S3)
	ctx := t.Context()
	data := []byte("a payload a dying removal had moved aside")
	ref, release := mustPut(t, s, data)
	release()
	h, _ := hexOf(ref)
	moved, err := s.moveToTrash(ctx, h)
	if err != nil || moved.key == "" {
		t.Fatalf("moveToTrash got %+v, %v", moved, err)
	}
	intent := s.prefix + removingPrefix + h + "." + randomSuffix()
	if err := s.put(ctx, intent, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, ref); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Get while the payload is in the trash: got %q, %v; want it", got, err)
	}

	s.StaleAge = 2 * time.Second
	if refs, err := s.Refs(ctx); err != nil || len(refs) != 0 {
		t.Errorf("Refs before the trash is stale: got %v, %v; want none", refs, err)
	}
	time.Sleep(3 * time.Second)
	refs, err := s.Refs(ctx)
	if err != nil || !slices.Equal(refs, []string{ref}) {
		t.Errorf("Refs once the trash is stale: got %v, %v; want [%s]", refs, err, ref)
	}
	client, err := srv.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	key := s.payloadKey(h)
	if _, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: &key}); err != nil {
		t.Errorf("payload after Refs: got %v, want it put back", err)
	}
	b.wantNoLeftovers(t)
}

// turns orders the requests of two actors to the store: a request starts only once the other
// actor waits before its next one or has finished, and which of the waiting goes next is
// drawn at random (the writer with probability writerFirst), so every run is one
// interleaving of the two, one request at a time.
type turns struct {
	mu          sync.Mutex
	cond        *sync.Cond
	rng         *rand.Rand
	writerFirst float64
	running     [2]bool
	waiting     [2]bool
	chosen      int
	trace       []string
}

func newTurns(seed uint64, writerFirst float64) *turns {
	tt := &turns{rng: rand.New(rand.NewPCG(seed, seed)), writerFirst: writerFirst, running: [2]bool{true, true}, chosen: -1}
	tt.cond = sync.NewCond(&tt.mu)
	return tt
}

// take blocks actor a (0 the writer, 1 the remover) until its next step may run.
func (tt *turns) take(a int, step string) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.running[a], tt.waiting[a] = false, true
	tt.cond.Broadcast()
	for tt.chosen != a {
		if tt.chosen == -1 && !tt.running[0] && !tt.running[1] {
			switch {
			case tt.waiting[0] && tt.waiting[1]:
				tt.chosen = 1
				if tt.rng.Float64() < tt.writerFirst {
					tt.chosen = 0
				}
			case tt.waiting[0]:
				tt.chosen = 0
			default:
				tt.chosen = 1
			}
			tt.cond.Broadcast()
			continue
		}
		tt.cond.Wait()
	}
	tt.chosen, tt.waiting[a], tt.running[a] = -1, false, true
	tt.trace = append(tt.trace, []string{"W", "R"}[a]+" "+step)
}

// done marks actor a finished.
func (tt *turns) done(a int) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.running[a] = false
	tt.cond.Broadcast()
}

// A Put whose writer commits its reference and releases, and a Remove of the same payload,
// on separate store instances, in hundreds of random orders of their requests to the store
// (each request answered before the next starts, as S3's consistency orders them): the
// committed payload is always at its key afterwards, and nothing else is left.
func TestS3EveryOrderOfAWriteAndARemovalKeepsTheCommittedPayload(t *testing.T) {
	srv := s3Server(t)
	b := newS3Backend(t)
	client, err := srv.Client(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	const runs = 200
	for i := range runs {
		ctx := t.Context()
		data := []byte(fmt.Sprintf("payload of order %d %s", i, randomSuffix()))
		storedBefore := i%2 == 0
		if storedBefore {
			_, release := mustPut(t, b.open(t), data)
			release()
		}
		tt := newTurns(uint64(i), float64(i%9+1)/10)
		var g graph
		writer, remover := b.open(t).(*S3), b.open(t).(*S3)
		writer.beforeCall = func(op, key string) { tt.take(0, op+" "+key) }
		remover.beforeCall = func(op, key string) { tt.take(1, op+" "+key) }
		check := func(ctx context.Context, refs []string) ([]string, error) {
			tt.take(1, "graph check")
			return g.unreferenced(ctx, refs)
		}
		var wg sync.WaitGroup
		wg.Go(func() {
			defer tt.done(0)
			ref, release, err := writer.Put(ctx, data)
			if err != nil {
				t.Errorf("Put: %v", err)
				return
			}
			tt.take(0, "graph commit")
			g.commit(ref)
			release()
		})
		wg.Go(func() {
			defer tt.done(1)
			if err := remover.Remove(ctx, []string{Ref(data)}, check); err != nil {
				t.Errorf("Remove: %v", err)
			}
		})
		wg.Wait()
		key := remover.payloadKey(strings.TrimPrefix(Ref(data), refPrefix))
		if _, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &srv.Bucket, Key: &key}); err != nil {
			t.Fatalf("order %d (stored before %v): the committed payload is missing (%v) after\n%s", i, storedBefore, err, strings.Join(tt.trace, "\n"))
		}
		if left := b.leftovers(t); len(left) > 0 {
			t.Fatalf("order %d: got %v left in the store after\n%s", i, left, strings.Join(tt.trace, "\n"))
		}
	}
}
