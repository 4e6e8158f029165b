package blob

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/ctxgraph/ctxgraph/model"
)

// The object store keeps the same payloads and claims as the directory, as objects under
// one prefix of one bucket:
//
//	<prefix>ab/<hex>                  a payload, fanned out as on disk
//	<prefix>claims/<hex>.<random>     a writer's claim, as in the directory
//	<prefix>removing/<hex>.<random>   a removal's intent, which a writer cancels
//	<prefix>trash/<hex>.<random>      a payload a removal moved aside, restored if a writer
//	                                  cancelled the removal
//
// An object store has no lock to hold across a check and a delete, so S3 replaces the
// directory's flock with a handshake that needs only what S3 promises (every write, delete
// and listing is strongly consistent: once a write has answered, every later read and
// listing sees it):
//
//   - Put writes its claim, then lists the removal intents of the payload and deletes them
//     (cancels the removals), then writes the payload unless it is there.
//   - Remove writes an intent for each payload it may remove, then lists the claims and asks
//     unreferenced about the unclaimed ones, then copies each payload it answers to the trash
//     and deletes it, then reads its intent again: an intent that is gone was cancelled by a
//     writer, and the payload is copied back from the trash. Then it deletes the trash and
//     its intents.
//
// Why no committed reference is left without its payload: a write that references a payload
// holds its claim from before its payload is written until after its graph write commits.
// If the removal's listing of claims sees that claim, the payload is not removed. If it does
// not, the claim was written after that listing, so after the removal's intent, and the
// writer's listing of intents, which follows its claim, sees the intent (unless the removal
// had already ended, and then the writer writes the payload afresh). The writer then deletes
// the intent before it looks at the payload. Either the removal's second read of its intent
// comes after that delete, and the removal puts the payload back, or it comes before it, and
// then the removal's delete came before the writer's look at the payload, which finds it
// missing and writes it. A writer whose graph write committed before the removal listed the
// claims is seen by unreferenced, which reads after that listing. A removal that died half
// way leaves an intent (which Refs deletes once stale) or a trashed payload (which Refs
// copies back once stale, for the sweep to judge again, and which Get reads meanwhile).

// The key prefixes of claims, removal intents and trashed payloads under the store's prefix.
const (
	claimsPrefix   = claimsDir + "/"
	removingPrefix = "removing/"
	trashPrefix    = "trash/"
)

// s3Timeout bounds a release's delete and the other calls that run without a request's
// context.
const s3Timeout = 30 * time.Second

// S3 stores payloads as objects in an S3-compatible object store.
type S3 struct {
	client *s3.Client
	bucket string
	prefix string // "" or ending in "/"
	// StaleAge is the age past which a claim, an intent or a trashed payload is the
	// leftover of a crashed process.
	StaleAge time.Duration
	// beforeCall, set by tests, runs before each request to the store with its kind and
	// key, so that a test can order two stores' requests as it likes.
	beforeCall func(op, key string)
}

var _ model.BlobStore = (*S3)(nil)

// ParseS3URL splits a location "s3://bucket/prefix" into the bucket and the key prefix
// ("" or ending in "/").
func ParseS3URL(location string) (bucket, prefix string, err error) {
	u, err := url.Parse(location)
	if err != nil || u.Scheme != "s3" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", "", fmt.Errorf("blob URL %q: want s3://bucket or s3://bucket/prefix", location)
	}
	prefix = strings.Trim(u.Path, "/")
	if prefix != "" {
		prefix += "/"
	}
	return u.Host, prefix, nil
}

// OpenS3 opens the store at location ("s3://bucket/prefix"). The endpoint, region and
// credentials come from the standard AWS configuration (AWS_ENDPOINT_URL_S3 or
// AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, the shared
// files, an instance role), overridden by opts; with an endpoint other than AWS's, buckets
// are addressed by path, as S3-compatible servers expect. The bucket must exist: a bucket
// that is missing or refuses the credentials is an error here, while a store that does not
// answer yet is not (its calls answer unavailable until it does).
func OpenS3(ctx context.Context, location string, opts ...func(*config.LoadOptions) error) (*S3, error) {
	bucket, prefix, err := ParseS3URL(location)
	if err != nil {
		return nil, err
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("blob store %s: AWS configuration: %w", location, err)
	}
	if cfg.Region == "" {
		// S3-compatible servers ignore the region but the signature needs one.
		cfg.Region = "us-east-1"
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.UsePathStyle = o.BaseEndpoint != nil
	})
	st := &S3{client: client, bucket: bucket, prefix: prefix, StaleAge: DefaultStaleAge}
	headCtx, cancel := context.WithTimeout(ctx, s3Timeout)
	defer cancel()
	_, err = client.HeadBucket(headCtx, &s3.HeadBucketInput{Bucket: aws.String(bucket)})
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() >= 400 && re.HTTPStatusCode() < 500 {
		return nil, fmt.Errorf("blob store %s: bucket %q: %w", location, bucket, err)
	}
	return st, nil
}

// Put claims the payload, cancels the removals under way, then stores data unless it is
// stored already.
func (s *S3) Put(ctx context.Context, data []byte) (string, func(), error) {
	ref := Ref(data)
	hexSum := strings.TrimPrefix(ref, refPrefix)
	claim := s.prefix + claimsPrefix + hexSum + "." + randomSuffix()
	if err := s.put(ctx, claim, nil); err != nil {
		return "", nil, unwritable(err)
	}
	release := func() {
		ctx, cancel := context.WithTimeout(context.Background(), s3Timeout)
		defer cancel()
		_ = s.delete(ctx, claim)
	}
	if err := s.putPayload(ctx, hexSum, data); err != nil {
		release()
		return "", nil, err
	}
	return ref, release, nil
}

// putPayload cancels the removals of the payload under way, then writes it unless it is
// there. The claim is already written.
func (s *S3) putPayload(ctx context.Context, hexSum string, data []byte) error {
	intents, err := s.list(ctx, s.prefix+removingPrefix+hexSum+".")
	if err != nil {
		return unreadable(err)
	}
	for _, intent := range intents {
		if err := s.delete(ctx, intent.key); err != nil {
			return unwritable(err)
		}
	}
	key := s.payloadKey(hexSum)
	err = s.head(ctx, key)
	if err == nil {
		return nil
	}
	if !isNotFound(err) {
		return unreadable(err)
	}
	if err := s.put(ctx, key, data); err != nil {
		return unwritable(err)
	}
	return nil
}

// Get reads the payload of ref and checks that its bytes still hash to ref. A payload that
// a removal has just moved aside (and may be putting back) is read from the trash.
func (s *S3) Get(ctx context.Context, ref string) ([]byte, error) {
	hexSum, err := hexOf(ref)
	if err != nil {
		return nil, err
	}
	data, err := s.get(ctx, s.payloadKey(hexSum))
	if isNotFound(err) {
		data, err = s.getTrashed(ctx, hexSum)
	}
	if isNotFound(err) {
		return nil, model.NotFound("blob", ref)
	}
	if err != nil {
		return nil, unreadable(err)
	}
	return verified(ref, data)
}

// getTrashed reads a trashed copy of the payload, or the payload itself if a removal put it
// back while this read looked.
func (s *S3) getTrashed(ctx context.Context, hexSum string) ([]byte, error) {
	trashed, err := s.list(ctx, s.prefix+trashPrefix+hexSum+".")
	if err != nil {
		return nil, err
	}
	for _, t := range trashed {
		data, err := s.get(ctx, t.key)
		if !isNotFound(err) {
			return data, err
		}
	}
	return s.get(ctx, s.payloadKey(hexSum))
}

// Remove removes those of refs that no claim holds and unreferenced answers, by the
// handshake of the package comment. A first pass without intents leaves out what is claimed
// or referenced, so that a sweep over every payload writes intents only for the few it may
// remove.
func (s *S3) Remove(ctx context.Context, refs []string, unreferenced func(context.Context, []string) ([]string, error)) error {
	hexes := map[string]string{}
	for _, ref := range refs {
		h, err := hexOf(ref)
		if err != nil {
			return err
		}
		hexes[ref] = h
	}
	candidates, err := s.unclaimedUnreferenced(ctx, slices.Sorted(maps.Keys(hexes)), hexes, unreferenced)
	if err != nil || len(candidates) == 0 {
		return err
	}

	intents := map[string]string{} // ref -> its intent's key
	defer func() {
		cleanCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s3Timeout)
		defer cancel()
		for _, key := range intents {
			_ = s.delete(cleanCtx, key)
		}
	}()
	for _, ref := range candidates {
		key := s.prefix + removingPrefix + hexes[ref] + "." + randomSuffix()
		if err := s.put(ctx, key, nil); err != nil {
			return unwritable(err)
		}
		intents[ref] = key
	}
	orphans, err := s.unclaimedUnreferenced(ctx, candidates, hexes, unreferenced)
	if err != nil || len(orphans) == 0 {
		return err
	}

	var moved []trashed
	var failed error
	for _, ref := range orphans {
		t, err := s.moveToTrash(ctx, hexes[ref])
		if t.key != "" {
			t.intent = intents[ref]
			moved = append(moved, t)
		}
		if err != nil {
			failed = err
			break
		}
	}
	// What was moved is put back where a writer cancelled the removal, even when a later
	// move failed or the request ended: a writer may have committed its reference.
	restoreCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s3Timeout)
	defer cancel()
	for _, t := range moved {
		if err := s.settle(restoreCtx, t); err != nil && failed == nil {
			failed = err
		}
	}
	return failed
}

// unclaimedUnreferenced returns those of refs that no claim holds and unreferenced answers.
func (s *S3) unclaimedUnreferenced(ctx context.Context, refs []string, hexes map[string]string, unreferenced func(context.Context, []string) ([]string, error)) ([]string, error) {
	claims, err := s.list(ctx, s.prefix+claimsPrefix)
	if err != nil {
		return nil, unreadable(err)
	}
	claimed := map[string]bool{}
	for _, c := range claims {
		h, _, _ := strings.Cut(strings.TrimPrefix(c.key, s.prefix+claimsPrefix), ".")
		claimed[h] = true
	}
	var unclaimed []string
	for _, ref := range refs {
		if !claimed[hexes[ref]] {
			unclaimed = append(unclaimed, ref)
		}
	}
	if len(unclaimed) == 0 {
		return nil, nil
	}
	orphans, err := unreferenced(ctx, unclaimed)
	if err != nil {
		return nil, err
	}
	// Only what was asked about: unreferenced answers a subset.
	asked := map[string]bool{}
	for _, ref := range unclaimed {
		asked[ref] = true
	}
	var out []string
	for _, ref := range orphans {
		if asked[ref] {
			out = append(out, ref)
			delete(asked, ref)
		}
	}
	return out, nil
}

// trashed is a payload that a removal moved aside (copied to the trash, then deleted or
// perhaps deleted: a delete that failed may have happened): its hash, its trash key and the
// removal's intent.
type trashed struct {
	hexSum, key, intent string
}

// moveToTrash copies the payload to a trash key of its own and deletes it. A payload that is
// not there is left alone (zero key); one whose copy succeeded is returned even when the
// delete failed, for settle to judge and clean up.
func (s *S3) moveToTrash(ctx context.Context, hexSum string) (trashed, error) {
	src := s.payloadKey(hexSum)
	key := s.prefix + trashPrefix + hexSum + "." + randomSuffix()
	err := s.copy(ctx, key, src)
	if isNotFound(err) {
		return trashed{}, nil
	}
	if err != nil {
		return trashed{}, unwritable(err)
	}
	t := trashed{hexSum: hexSum, key: key}
	if err := s.delete(ctx, src); err != nil {
		return t, unwritable(err)
	}
	return t, nil
}

// settle ends the removal of one moved payload: if a writer cancelled the intent, the
// payload goes back; then the trash goes. A payload that cannot be put back stays in the
// trash, where Get reads it and Refs restores it once stale.
func (s *S3) settle(ctx context.Context, t trashed) error {
	// An intent that is gone was cancelled by a writer; one that cannot be read may have
	// been: either way the payload goes back.
	if err := s.head(ctx, t.intent); err != nil {
		if err := s.restore(ctx, t.key, t.hexSum); err != nil {
			return err
		}
	}
	if err := s.delete(ctx, t.key); err != nil {
		return unwritable(err)
	}
	return nil
}

// restore copies a trashed payload back to its key.
func (s *S3) restore(ctx context.Context, trashKey, hexSum string) error {
	if err := s.copy(ctx, s.payloadKey(hexSum), trashKey); err != nil {
		return unwritable(err)
	}
	return nil
}

// Refs lists every payload. On the way it deletes claims and intents older than StaleAge
// and puts back payloads trashed longer ago than that: their processes died, since no
// request runs that long, and a payload put back is judged again by the sweep.
func (s *S3) Refs(ctx context.Context) ([]string, error) {
	objects, serverNow, err := s.listAt(ctx, s.prefix)
	if err != nil {
		return nil, unreadable(err)
	}
	// Ages are the store's: its clock wrote the times, so a server whose clock runs ahead
	// does not take a running write's claim for a dead one.
	staleBefore := serverNow.Add(-s.StaleAge)
	present := map[string]bool{}
	var refs []string
	var staleTrash []object
	for _, o := range objects {
		name := strings.TrimPrefix(o.key, s.prefix)
		stale := o.modified.Before(staleBefore)
		switch {
		case strings.HasPrefix(name, claimsPrefix), strings.HasPrefix(name, removingPrefix):
			if stale {
				_ = s.delete(ctx, o.key)
			}
		case strings.HasPrefix(name, trashPrefix):
			if stale {
				staleTrash = append(staleTrash, o)
			}
		default:
			fan, h, ok := strings.Cut(name, "/")
			if ok && len(fan) == 2 && len(h) == sha256.Size*2 && strings.HasPrefix(h, fan) {
				refs = append(refs, refPrefix+h)
				present[h] = true
			}
		}
	}
	for _, o := range staleTrash {
		h, _, _ := strings.Cut(strings.TrimPrefix(o.key, s.prefix+trashPrefix), ".")
		if !present[h] {
			if err := s.restore(ctx, o.key, h); err != nil {
				continue
			}
			present[h] = true
			refs = append(refs, refPrefix+h)
		}
		_ = s.delete(ctx, o.key)
	}
	sort.Strings(refs)
	return refs, nil
}

// object is one listed key and when it was last written.
type object struct {
	key      string
	modified time.Time
}

// list returns every object whose key starts with prefix.
func (s *S3) list(ctx context.Context, prefix string) ([]object, error) {
	out, _, err := s.listAt(ctx, prefix)
	return out, err
}

// listAt is list, with the store's time when it began to answer (this process's clock
// when the store sends none).
func (s *S3) listAt(ctx context.Context, prefix string) ([]object, time.Time, error) {
	s.before("list", prefix)
	var out []object
	var serverNow time.Time
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, time.Time{}, err
		}
		if serverNow.IsZero() {
			serverNow, _ = awsmiddleware.GetServerTime(page.ResultMetadata)
		}
		for _, o := range page.Contents {
			out = append(out, object{key: aws.ToString(o.Key), modified: aws.ToTime(o.LastModified)})
		}
	}
	if serverNow.IsZero() {
		serverNow = time.Now()
	}
	return out, serverNow, nil
}

// put writes an object; a nil body writes an empty one.
func (s *S3) put(ctx context.Context, key string, data []byte) error {
	s.before("put", key)
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        &s.bucket,
		Key:           &key,
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	})
	return err
}

// get reads a whole object.
func (s *S3) get(ctx context.Context, key string) ([]byte, error) {
	s.before("get", key)
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

// delete deletes an object; deleting one that is not there succeeds, as S3 answers.
func (s *S3) delete(ctx context.Context, key string) error {
	s.before("delete", key)
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key})
	if isNotFound(err) {
		return nil
	}
	return err
}

// head reads whether an object is there.
func (s *S3) head(ctx context.Context, key string) error {
	s.before("head", key)
	_, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key})
	return err
}

// copy copies the object src to dst, within the bucket.
func (s *S3) copy(ctx context.Context, dst, src string) error {
	s.before("copy", src+" -> "+dst)
	_, err := s.client.CopyObject(ctx, &s3.CopyObjectInput{
		Bucket:     &s.bucket,
		Key:        &dst,
		CopySource: aws.String((&url.URL{Path: s.bucket + "/" + src}).EscapedPath()),
	})
	return err
}

func (s *S3) before(op, key string) {
	if s.beforeCall != nil {
		s.beforeCall(op, key)
	}
}

func (s *S3) payloadKey(hexSum string) string { return s.prefix + hexSum[:2] + "/" + hexSum }

// isNotFound reports whether err is S3's answer that a key (or, for a copy, its source) is
// missing.
func isNotFound(err error) bool {
	if err == nil {
		return false
	}
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	if errors.As(err, &nsk) || errors.As(err, &nf) {
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) && (api.ErrorCode() == "NoSuchKey" || api.ErrorCode() == "NotFound") {
		return true
	}
	var re *awshttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound && !isNoSuchBucket(err)
}

func isNoSuchBucket(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && api.ErrorCode() == "NoSuchBucket"
}

func unreadable(err error) error { return model.Unavailable("blob store cannot be read", err) }

// hexOf returns the hash a reference names, refusing anything that is not a sha256
// reference.
func hexOf(ref string) (string, error) {
	hexSum, ok := strings.CutPrefix(ref, refPrefix)
	if !ok || len(hexSum) != sha256.Size*2 {
		return "", model.Internal("malformed blob reference", fmt.Errorf("ref %q", ref))
	}
	if _, err := hex.DecodeString(hexSum); err != nil {
		return "", model.Internal("malformed blob reference", fmt.Errorf("ref %q", ref))
	}
	return hexSum, nil
}

// randomSuffix names one claim, intent or trashed copy apart from the others of its payload.
func randomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
