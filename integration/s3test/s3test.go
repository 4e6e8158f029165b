// Package s3test finds the real S3-compatible server that tests of the S3 blob store run
// against: the one the CTXGRAPH_TEST_S3_* variables name, as `scripts/seaweedfs env` prints
// them. Without it, tests fail loudly: `make test` starts the project's SeaweedFS and sets
// the variables before running them. A test that needs a SeaweedFS of its own (its own data,
// or one to stop) starts one with Start. Nothing here stands in for the server.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Server is how to reach the S3 server of a test run, and the bucket the tests use.
type Server struct {
	Endpoint  string
	Bucket    string
	AccessKey string
	SecretKey string
	Region    string
}

// Find returns the test run's S3 server, or an error that says how to start one.
func Find() (Server, error) {
	s := Server{
		Endpoint:  os.Getenv("CTXGRAPH_TEST_S3_ENDPOINT"),
		Bucket:    os.Getenv("CTXGRAPH_TEST_S3_BUCKET"),
		AccessKey: os.Getenv("CTXGRAPH_TEST_S3_ACCESS_KEY"),
		SecretKey: os.Getenv("CTXGRAPH_TEST_S3_SECRET_KEY"),
		Region:    os.Getenv("CTXGRAPH_TEST_S3_REGION"),
	}
	if s.Endpoint == "" || s.Bucket == "" || s.AccessKey == "" || s.SecretKey == "" {
		return Server{}, fmt.Errorf("no S3 server for the tests: CTXGRAPH_TEST_S3_ENDPOINT, _BUCKET, _ACCESS_KEY and _SECRET_KEY " +
			"must be set; `make test` sets them, or run `scripts/seaweedfs start && export $(scripts/seaweedfs env)`")
	}
	if s.Region == "" {
		s.Region = "us-east-1"
	}
	return s, nil
}

// Options configure an AWS client for the server, whatever AWS variables the environment
// holds.
func (s Server) Options() []func(*config.LoadOptions) error {
	return []func(*config.LoadOptions) error{
		config.WithBaseEndpoint(s.Endpoint),
		config.WithRegion(s.Region),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, "")),
	}
}

// Env is the standard AWS environment of a ctxgraph process that uses the server.
func (s Server) Env() []string {
	return []string{
		"AWS_ENDPOINT_URL_S3=" + s.Endpoint,
		"AWS_REGION=" + s.Region,
		"AWS_ACCESS_KEY_ID=" + s.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
	}
}

// NewLocation returns a location (s3://bucket/prefix/) under a fresh random prefix, so that
// tests sharing the bucket never see each other's objects.
func (s Server) NewLocation(name string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return fmt.Sprintf("s3://%s/%s-%s", s.Bucket, name, hex.EncodeToString(b))
}

// Client is a plain S3 client of the server, for tests that look at or change objects
// behind the store's back.
func (s Server) Client(ctx context.Context) (*s3.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx, s.Options()...)
	if err != nil {
		return nil, err
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true }), nil
}

// Keys lists the keys under prefix in the bucket.
func (s Server) Keys(ctx context.Context, client *s3.Client, prefix string) ([]string, error) {
	var out []string
	p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: &s.Bucket, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Contents {
			out = append(out, aws.ToString(o.Key))
		}
	}
	return out, nil
}

// DeleteAll deletes every object under prefix, for a test's cleanup.
func (s Server) DeleteAll(ctx context.Context, client *s3.Client, prefix string) error {
	keys, err := s.Keys(ctx, client, prefix)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.Bucket, Key: aws.String(k)}); err != nil {
			return err
		}
	}
	return nil
}

// Start runs the project's SeaweedFS (scripts/seaweedfs) with data in home and S3 on port
// (it also takes the three ports after it and the four 1000 above; 0 picks free ones), and
// stops it when the test ends. The weed binary is built on first use, which takes minutes.
func Start(t testing.TB, home string, port int) Server {
	t.Helper()
	if port == 0 {
		port = freePorts(t)
	}
	env := append(os.Environ(), "SEAWEEDFS_HOME="+home, "SEAWEEDFS_PORT="+strconv.Itoa(port))
	run := func(args ...string) []byte {
		cmd := exec.Command(script(), args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("scripts/seaweedfs %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	run("start")
	t.Cleanup(func() { run("stop") })
	vars := map[string]string{}
	for _, line := range strings.Split(string(run("env")), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			vars[k] = v
		}
	}
	return Server{Endpoint: vars["CTXGRAPH_TEST_S3_ENDPOINT"], Bucket: vars["CTXGRAPH_TEST_S3_BUCKET"],
		AccessKey: vars["CTXGRAPH_TEST_S3_ACCESS_KEY"], SecretKey: vars["CTXGRAPH_TEST_S3_SECRET_KEY"],
		Region: vars["CTXGRAPH_TEST_S3_REGION"]}
}

// script is the path of scripts/seaweedfs, found from this file's.
func script() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "scripts", "seaweedfs")
}

// freePorts returns a port p such that p to p+3 and p+1000 to p+1003 are free now.
func freePorts(t testing.TB) int {
	t.Helper()
	for range 50 {
		p := 20000 + mrand.IntN(20000)
		free := true
		for _, q := range []int{p, p + 1, p + 2, p + 3, p + 1000, p + 1001, p + 1002, p + 1003} {
			ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(q))
			if err != nil {
				free = false
				break
			}
			ln.Close()
		}
		if free {
			return p
		}
	}
	t.Fatal("no free ports for SeaweedFS")
	return 0
}
