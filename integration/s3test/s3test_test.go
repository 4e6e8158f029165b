package s3test

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Start gives a SeaweedFS of the test's own, with its bucket and credentials, that keeps an
// object until it is stopped at the test's end.
func TestStartRunsASeaweedFSOfItsOwn(t *testing.T) {
	srv := Start(t, filepath.Join(t.TempDir(), "seaweedfs"), 0)
	client, err := srv.Client(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	key := "hello"
	if _, err := client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: &srv.Bucket, Key: &key, Body: bytes.NewReader([]byte("world"))}); err != nil {
		t.Fatalf("PutObject on %s: %v", srv.Endpoint, err)
	}
	out, err := client.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(srv.Bucket), Key: &key})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	if b, _ := io.ReadAll(out.Body); string(b) != "world" {
		t.Errorf("got %q, want world", b)
	}
}
