package cypher

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// payload is a raw body as the graph keeps it: inline when small, otherwise a blob
// reference, always with its sha256 and byte count.
type payload struct {
	inline any
	ref    any
	sha256 string
	bytes  int64
}

// capture hashes raw and, when it is larger than the inline limit, writes it to the blob
// store. The blob is written before the graph transaction so that a committed artifact never
// points at a missing payload.
func (s *Store) capture(ctx context.Context, raw []byte) (payload, error) {
	sum := sha256.Sum256(raw)
	p := payload{sha256: hex.EncodeToString(sum[:]), bytes: int64(len(raw))}
	if len(raw) == 0 {
		return p, nil
	}
	if len(raw) <= s.InlineLimit {
		p.inline = string(raw)
		return p, nil
	}
	ref, err := s.blobs.Put(ctx, raw)
	if err != nil {
		return payload{}, err
	}
	p.ref = ref
	return p, nil
}

// restore reads a payload back, from the graph or the blob store, and checks its hash.
func (s *Store) restore(ctx context.Context, p props, inlineKey, refKey, shaKey string) ([]byte, error) {
	var raw []byte
	if ref := p.str(refKey); ref != "" {
		data, err := s.blobs.Get(ctx, ref)
		if err != nil {
			return nil, err
		}
		raw = data
	} else {
		raw = []byte(p.str(inlineKey))
	}
	want := p.str(shaKey)
	if want == "" {
		return raw, nil
	}
	if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != want {
		return nil, model.Internal("raw payload failed its hash check", fmt.Errorf("%s of %s does not hash to %s", inlineKey, p.str("id"), want))
	}
	return raw, nil
}

// forgetPayloadOnFailure removes the blob a failed write stored, unless another record holds
// the same content, so that a failed request leaves no payload behind. It returns err. The
// removal outlives the request's context, which may be why the write failed.
func (s *Store) forgetPayloadOnFailure(ctx context.Context, err error, p payload) error {
	if err == nil {
		return nil
	}
	if ref, ok := p.ref.(string); ok {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), forgetTimeout)
		defer cancel()
		_ = s.dropUnreferencedBlobs(ctx, []string{ref})
	}
	return err
}

// forgetTimeout bounds the removal of a failed write's blob.
const forgetTimeout = 10 * time.Second
