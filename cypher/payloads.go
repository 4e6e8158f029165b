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
	// release ends the blob store's claim on a payload stored as a blob (nil otherwise).
	release func()
}

// capture hashes raw and, when it is larger than the inline limit, writes it to the blob
// store. The blob is written before the graph transaction so that a committed artifact never
// points at a missing payload, and stays claimed until settle: no removal takes it while
// the write that references it is under way.
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
	ref, release, err := s.blobs.Put(ctx, raw)
	if err != nil {
		return payload{}, err
	}
	p.ref, p.release = ref, release
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

// settle ends the write of p: it releases the payload's claim and, when the write failed
// (err), removes the blob unless a record holds the same content, so that a failed request
// leaves no payload behind. It returns err. The removal outlives the request's context,
// which may be why the write failed; when Neo4j is away, the blob sweeper takes it up once
// Neo4j is back.
func (s *Store) settle(ctx context.Context, err error, p payload) error {
	if p.release == nil {
		return err
	}
	p.release()
	switch {
	case err != nil && model.KindOf(err) == model.KindUnavailable && ctx.Err() == nil:
		// Neo4j has just failed to answer (not the request ending): the sweeper checks the
		// blob once it does.
		s.blobRetry.add([]string{p.ref.(string)})
	case err != nil:
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), forgetTimeout)
		defer cancel()
		s.removeBlobs(ctx, []string{p.ref.(string)})
	}
	return err
}

// forgetTimeout bounds the removal of a failed write's blob.
const forgetTimeout = 10 * time.Second
