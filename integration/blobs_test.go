package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/ctxgraph/ctxgraph/blob"
	"github.com/ctxgraph/ctxgraph/integration/s3test"
)

// The suite's blob stores are directories, or with CTXGRAPH_TEST_BLOB_STORE=s3 prefixes of
// the tests' S3 bucket (s3test), reached the way a ctxgraph server reaches them: through the
// standard AWS variables, which the suite sets for itself and the servers it starts. A blob
// location is a directory or an s3:// URL; the helpers below read and change what a location
// holds without the code under test.
var (
	blobsOnS3 *s3test.Server
	s3Client  *s3.Client
)

// setUpBlobStores reads CTXGRAPH_TEST_BLOB_STORE and returns the suite's blob location.
func setUpBlobStores(ctx context.Context) (string, error) {
	switch kind := os.Getenv("CTXGRAPH_TEST_BLOB_STORE"); kind {
	case "", "dir":
		return os.MkdirTemp("", "ctxgraph-blobs-")
	case "s3":
		srv, err := s3test.Find()
		if err != nil {
			return "", err
		}
		for _, kv := range srv.Env() {
			k, v, _ := strings.Cut(kv, "=")
			os.Setenv(k, v)
		}
		os.Unsetenv("AWS_ENDPOINT_URL")
		os.Unsetenv("AWS_PROFILE")
		if s3Client, err = srv.Client(ctx); err != nil {
			return "", err
		}
		blobsOnS3 = &srv
		return srv.NewLocation("integration"), nil
	default:
		return "", fmt.Errorf("CTXGRAPH_TEST_BLOB_STORE=%q: want dir or s3", kind)
	}
}

// removeBlobLocation deletes what a location holds, at the suite's end.
func removeBlobLocation(location string) {
	if blobsOnS3 == nil {
		os.RemoveAll(location)
		return
	}
	_, prefix, _ := blob.ParseS3URL(location)
	_ = blobsOnS3.DeleteAll(context.Background(), s3Client, prefix)
}

// newBlobLocation returns an empty blob location of the test's own.
func newBlobLocation(t *testing.T) string {
	if blobsOnS3 == nil {
		return t.TempDir()
	}
	location := blobsOnS3.NewLocation("integration")
	t.Cleanup(func() { removeBlobLocation(location) })
	return location
}

// blobStoreEnv is the variable that gives a ctxgraph server the blob location.
func blobStoreEnv(location string) string {
	if blobsOnS3 == nil {
		return "CTXGRAPH_BLOB_DIR=" + location
	}
	return "CTXGRAPH_BLOB_URL=" + location
}

// blobPath is where the payload of ref lies in location: a file or an object key.
func blobPath(t *testing.T, location, ref string) string {
	t.Helper()
	hexSum, ok := strings.CutPrefix(ref, "sha256:")
	if !ok || len(hexSum) != 64 {
		t.Fatalf("not a blob reference: %q", ref)
	}
	if blobsOnS3 == nil {
		return filepath.Join(location, hexSum[:2], hexSum)
	}
	_, prefix, err := blob.ParseS3URL(location)
	if err != nil {
		t.Fatal(err)
	}
	return prefix + hexSum[:2] + "/" + hexSum
}

// blobStored reports whether the payload of ref is in location.
func blobStored(t *testing.T, location, ref string) bool {
	t.Helper()
	_, err := readBlob(t, location, ref)
	return err == nil
}

// readBlob reads the stored bytes of ref as they are, unverified; the error says whether
// they are missing (fs.ErrNotExist) or could not be read (the test fails).
func readBlob(t *testing.T, location, ref string) ([]byte, error) {
	t.Helper()
	path := blobPath(t, location, ref)
	if blobsOnS3 == nil {
		data, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return data, err
	}
	out, err := s3Client.GetObject(t.Context(), &s3.GetObjectInput{Bucket: &blobsOnS3.Bucket, Key: &path})
	var missing *types.NoSuchKey
	if errors.As(err, &missing) {
		return nil, os.ErrNotExist
	}
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(out.Body); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), nil
}

// writeBlob replaces the stored bytes of ref, as a disk or a bucket that corrupts them would.
func writeBlob(t *testing.T, location, ref string, data []byte) {
	t.Helper()
	path := blobPath(t, location, ref)
	if blobsOnS3 == nil {
		if err := os.WriteFile(path, data, 0o640); err != nil {
			t.Fatal(err)
		}
		return
	}
	if _, err := s3Client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: &blobsOnS3.Bucket, Key: &path, Body: bytes.NewReader(data)}); err != nil {
		t.Fatal(err)
	}
}

// storedBlobs lists the references of the payloads in location.
func storedBlobs(t *testing.T, location string) []string {
	t.Helper()
	var refs []string
	if blobsOnS3 == nil {
		fanouts, err := os.ReadDir(location)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fanouts {
			if !f.IsDir() || len(f.Name()) != 2 {
				continue
			}
			entries, err := os.ReadDir(filepath.Join(location, f.Name()))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if len(e.Name()) == 64 {
					refs = append(refs, "sha256:"+e.Name())
				}
			}
		}
		return refs
	}
	_, prefix, err := blob.ParseS3URL(location)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := blobsOnS3.Keys(t.Context(), s3Client, prefix)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		fan, h, ok := strings.Cut(strings.TrimPrefix(k, prefix), "/")
		if ok && len(fan) == 2 && len(h) == 64 {
			refs = append(refs, "sha256:"+h)
		}
	}
	return refs
}
