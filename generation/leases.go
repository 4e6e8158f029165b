package generation

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/ctxgraph/ctxgraph/model"
)

// sweepLimit is how many lapsed runs one sweep ends; a sweep that ends that many sweeps
// again at once.
const sweepLimit = 64

// unrecordedEvery is how often a keeper tries to end the runs whose calls it could not
// record while Neo4j was unavailable (EndUnrecorded), so that their cause is recorded soon
// after Neo4j is back, and is seldom first seen as a sweep's interrupted.
const unrecordedEvery = time.Second

// LeaseKeeper keeps the leases of one server process (DESIGN §6 "Runs that outlive their
// server"): the runs whose model call the process serves and the Idempotency-Key claims of
// its generation requests are renewed every third of Term while held, in one statement,
// and every process sweeps the runs whose lease lapsed — whoever held them — ending each
// as failed, interrupted. A run whose model call the process could not record because
// Neo4j was unavailable it ends with that cause, database_unavailable, once Neo4j is back.
// It runs whether or not the process runs the scheduler: a server that serves generations
// must renew its leases, and any live server notices a dead one. Until Start, it hands out
// no leases: a process that never renews writes none.
type LeaseKeeper struct {
	Graph model.LeaseGraph
	// Term is how long a lease holds without renewal (model.DefaultRunLease when zero).
	Term time.Duration
	Log  *zap.Logger

	mu         sync.Mutex
	holder     string
	runs       map[string]int
	keys       map[*model.IdempotencyClaim]int
	unrecorded map[model.UnrecordedCall]bool
	stop       context.CancelFunc
	stopped    chan struct{}
}

// processName names this process among the servers sharing Neo4j: host, pid and a random
// suffix (a pid is reused across restarts and containers).
func processName() string {
	host, _ := os.Hostname()
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(suffix))
}

func (k *LeaseKeeper) lease() time.Duration {
	if k.Term > 0 {
		return k.Term
	}
	return model.DefaultRunLease
}

// Lease is what this process writes on a run it serves: see model.LeaseHolder. It is the
// zero RunLease until Start.
func (k *LeaseKeeper) Lease() model.RunLease {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stop == nil {
		return model.RunLease{}
	}
	return model.RunLease{Holder: k.holder, For: k.lease()}
}

// HoldRun renews the lease on runID until release: see model.LeaseHolder.
func (k *LeaseKeeper) HoldRun(runID string) (release func()) {
	return hold(k, k.runs, runID)
}

// HoldKey renews claim's hold on its key until release: see model.LeaseHolder.
func (k *LeaseKeeper) HoldKey(claim *model.IdempotencyClaim) (release func()) {
	return hold(k, k.keys, claim)
}

// EndUnrecorded has call's run ended as database_unavailable once Neo4j is back: see
// model.LeaseHolder. Before Start it does nothing: nothing sweeps either.
func (k *LeaseKeeper) EndUnrecorded(call model.UnrecordedCall) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stop != nil {
		k.unrecorded[call] = true
	}
}

// hold counts one more holder of v in held until the returned release; a held value is
// renewed while its count is positive.
func hold[K comparable](k *LeaseKeeper, held map[K]int, v K) (release func()) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stop == nil {
		return func() {}
	}
	held[v]++
	var once sync.Once
	return func() {
		once.Do(func() {
			k.mu.Lock()
			defer k.mu.Unlock()
			if held[v]--; held[v] <= 0 {
				delete(held, v)
			}
		})
	}
}

// Start renews and sweeps in the background until Stop.
func (k *LeaseKeeper) Start() {
	if k.Log == nil {
		k.Log = zap.NewNop()
	}
	ctx, stop := context.WithCancel(context.Background())
	k.mu.Lock()
	k.holder, k.runs, k.keys = processName(), map[string]int{}, map[*model.IdempotencyClaim]int{}
	k.unrecorded = map[model.UnrecordedCall]bool{}
	k.stop, k.stopped = stop, make(chan struct{})
	k.mu.Unlock()
	go k.loop(ctx)
}

// Stop renews no more: the leases still held lapse, and another server ends their runs.
// Close the server first, so that nothing is still held.
func (k *LeaseKeeper) Stop() {
	k.mu.Lock()
	stop, stopped := k.stop, k.stopped
	k.mu.Unlock()
	if stop == nil {
		return
	}
	stop()
	<-stopped
}

func (k *LeaseKeeper) loop(ctx context.Context) {
	defer close(k.stopped)
	t := time.NewTicker(k.lease() / 3)
	defer t.Stop()
	soon := time.NewTicker(min(unrecordedEvery, k.lease()/3))
	defer soon.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-soon.C:
			k.endUnrecorded(ctx)
		case <-t.C:
			k.renew(ctx)
			// This process's own sweep never ends a run it knows the cause of first.
			if k.endUnrecorded(ctx) {
				k.sweep(ctx)
			}
		}
	}
}

// endUnrecorded ends the runs EndUnrecorded was told of and says whether none is left.
// While Neo4j is unavailable they are kept to be tried again; a run whose end failed
// otherwise is logged and left to the sweep.
func (k *LeaseKeeper) endUnrecorded(ctx context.Context) (done bool) {
	k.mu.Lock()
	calls := make([]model.UnrecordedCall, 0, len(k.unrecorded))
	for c := range k.unrecorded {
		calls = append(calls, c)
	}
	k.mu.Unlock()
	for _, c := range calls {
		ended, err := k.Graph.EndUnrecordedRun(ctx, c)
		switch {
		case ctx.Err() != nil || model.KindOf(err) == model.KindUnavailable:
			return false
		case err != nil:
			k.Log.Warn("ending a run whose model call was not recorded failed; it lapses, interrupted", zap.String("runId", c.RunID), zap.Error(err))
		case ended:
			k.Log.Warn("run failed: its model call could not be recorded while Neo4j was unavailable", zap.String("runId", c.RunID))
		}
		k.mu.Lock()
		delete(k.unrecorded, c)
		k.mu.Unlock()
	}
	return true
}

// renew extends the leases held now, in one statement.
func (k *LeaseKeeper) renew(ctx context.Context) {
	k.mu.Lock()
	lease := model.RunLease{Holder: k.holder, For: k.lease()}
	runs := make([]string, 0, len(k.runs))
	for id := range k.runs {
		runs = append(runs, id)
	}
	keys := make([]*model.IdempotencyClaim, 0, len(k.keys))
	for c := range k.keys {
		keys = append(keys, c)
	}
	k.mu.Unlock()
	if len(runs)+len(keys) == 0 {
		return
	}
	if err := k.Graph.RenewLeases(ctx, lease, runs, keys); err != nil && ctx.Err() == nil {
		k.Log.Warn("renewing leases failed; they lapse unless the next renewal succeeds", zap.Int("runs", len(runs)), zap.Int("keys", len(keys)), zap.Error(err))
	}
}

// sweep ends the runs whose lease lapsed.
func (k *LeaseKeeper) sweep(ctx context.Context) {
	for ctx.Err() == nil {
		ended, err := k.Graph.EndLapsedRuns(ctx, sweepLimit)
		if err != nil {
			if ctx.Err() == nil {
				k.Log.Warn("ending runs whose lease lapsed failed", zap.Error(err))
			}
			return
		}
		if len(ended) > 0 {
			k.Log.Warn("runs interrupted: their server stopped renewing their lease mid-call", zap.Strings("runIds", ended))
		}
		if len(ended) < sweepLimit {
			return
		}
	}
}
