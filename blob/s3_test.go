package blob

import (
	"bytes"
	"context"
	"slices"
	"strings"
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
	if err != nil || !moved.deleted {
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
