package cypher

import (
	"context"
	"sync"
	"time"
)

// blobChunk is how many references one removal checks against the graph at once.
const blobChunk = 500

// blobRetryEvery is how often the sweeper retries the removals that could not run.
const blobRetryEvery = 5 * time.Second

// pendingBlobs holds the references whose removal failed (Neo4j did not answer the check),
// to be tried again by the sweeper.
type pendingBlobs struct {
	mu   sync.Mutex
	refs map[string]bool
}

func (p *pendingBlobs) add(refs []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refs == nil {
		p.refs = map[string]bool{}
	}
	for _, r := range refs {
		p.refs[r] = true
	}
}

func (p *pendingBlobs) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.refs))
	for r := range p.refs {
		out = append(out, r)
	}
	p.refs = nil
	return out
}

// removeBlobs removes the blobs among refs that no record references and no write claims.
// What cannot be checked now (Neo4j is away) is kept for the sweeper, so the caller's
// request, whose graph write is already decided, does not fail for it.
func (s *Store) removeBlobs(ctx context.Context, refs []string) {
	for start := 0; start < len(refs); start += blobChunk {
		chunk := refs[start:min(start+blobChunk, len(refs))]
		if err := s.blobs.Remove(ctx, chunk, s.unreferencedBlobRefs); err != nil {
			s.blobRetry.add(chunk)
		}
	}
}

// unreferencedBlobRefs reads which blob references nothing holds.
var unreferencedBlobRefs = newQuery[refsParams, refsParams]("UnreferencedBlobRefs")

// refsParams are blob references: what UnreferencedBlobRefs takes and answers.
type refsParams struct {
	Refs []string `param:"refs" col:"refs"`
}

// unreferencedBlobRefs returns those of refs that no artifact or tool call of any account
// holds. It runs in a write-mode transaction although it only reads, so that in a cluster
// it reads on the leader, which has every committed reference.
func (s *Store) unreferencedBlobRefs(ctx context.Context, refs []string) ([]string, error) {
	return writeTx(ctx, s, func(t *tx) ([]string, error) {
		row, _, err := unreferencedBlobRefs.one(t, refsParams{Refs: refs})
		return row.Refs, err
	})
}

// SweepBlobs removes every stored blob that no record references and no write claims:
// those of requests that failed while Neo4j was away, or of a process that stopped between
// writing a blob and its graph write. It also retries the removals that failed before.
func (s *Store) SweepBlobs(ctx context.Context) error {
	s.removeBlobs(ctx, s.blobRetry.take())
	refs, err := s.blobs.Refs(ctx)
	if err != nil {
		return err
	}
	for start := 0; start < len(refs); start += blobChunk {
		chunk := refs[start:min(start+blobChunk, len(refs))]
		if err := s.blobs.Remove(ctx, chunk, s.unreferencedBlobRefs); err != nil {
			return err
		}
	}
	return nil
}

// RunBlobSweeper sweeps the blob store until ctx ends: once at start (again every few
// seconds until Neo4j answers), then every `every`; in between it retries the removals that
// failed, every few seconds.
func (s *Store) RunBlobSweeper(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(blobRetryEvery)
	defer tick.Stop()
	var lastSweep time.Time
	swept := false
	for {
		if !swept || time.Since(lastSweep) >= every {
			if err := s.SweepBlobs(ctx); err == nil {
				swept, lastSweep = true, time.Now()
			}
		} else if refs := s.blobRetry.take(); len(refs) > 0 {
			s.removeBlobs(ctx, refs)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
