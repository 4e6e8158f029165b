package generation

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// leaseGraph records the renewals, sweeps and ends of unrecorded runs a LeaseKeeper makes.
// While unavailable is set, ending an unrecorded run fails as an outage does.
type leaseGraph struct {
	mu          sync.Mutex
	renewed     [][]string // the run ids and key claims of each renewal
	lease       model.RunLease
	sweeps      int
	unavailable bool
	ends        []string // the runs of each try to end an unrecorded run, then "sweep" for each sweep
}

func (g *leaseGraph) RenewLeases(_ context.Context, lease model.RunLease, runIDs []string, keys []*model.IdempotencyClaim) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	held := slices.Clone(runIDs)
	for _, k := range keys {
		held = append(held, k.Claim)
	}
	slices.Sort(held)
	g.renewed, g.lease = append(g.renewed, held), lease
	return nil
}

func (g *leaseGraph) EndLapsedRuns(context.Context, int) ([]string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sweeps++
	g.ends = append(g.ends, "sweep")
	return nil, nil
}

func (g *leaseGraph) EndUnrecordedRun(_ context.Context, call model.UnrecordedCall) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ends = append(g.ends, call.RunID)
	if g.unavailable {
		return false, model.Unavailable("Neo4j is unreachable", nil)
	}
	return true, nil
}

// tries counts the tries to end run and the sweeps, in that order.
func (g *leaseGraph) tries(run string) (tries, sweeps int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, e := range g.ends {
		if e == run {
			tries++
		}
	}
	return tries, g.sweeps
}

func (g *leaseGraph) setUnavailable(v bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.unavailable = v
}

func (g *leaseGraph) last() ([]string, model.RunLease, int, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.renewed) == 0 {
		return nil, g.lease, 0, g.sweeps
	}
	return g.renewed[len(g.renewed)-1], g.lease, len(g.renewed), g.sweeps
}

// waitFor polls cond for a second.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a second for %s", what)
		}
	}
}

// A keeper hands out no lease until started; then it renews what is held, in one call per
// tick, until released, and sweeps every tick whether or not it holds anything.
func TestLeaseKeeperRenewsWhatIsHeld(t *testing.T) {
	g := &leaseGraph{}
	k := &LeaseKeeper{Graph: g, Term: 30 * time.Millisecond}
	if l := k.Lease(); l != (model.RunLease{}) {
		t.Fatalf("before Start the lease is %+v, want none", l)
	}
	k.HoldRun("run_early")() // a no-op before Start
	k.Start()
	defer k.Stop()
	if l := k.Lease(); l.For != 30*time.Millisecond || l.Holder == "" {
		t.Fatalf("after Start the lease is %+v", l)
	}
	waitFor(t, "a sweep with nothing held", func() bool { _, _, _, sweeps := g.last(); return sweeps >= 1 })
	if _, _, renewals, _ := g.last(); renewals != 0 {
		t.Fatalf("%d renewals with nothing held, want none", renewals)
	}

	releaseRun := k.HoldRun("run_a")
	releaseAgain := k.HoldRun("run_a") // a second holder of the same run
	releaseKey := k.HoldKey(&model.IdempotencyClaim{Claim: "claim_1"})
	waitFor(t, "a renewal of both", func() bool {
		held, _, _, _ := g.last()
		return slices.Equal(held, []string{"claim_1", "run_a"})
	})
	if _, l, _, _ := g.last(); l != k.Lease() {
		t.Fatalf("renewed with %+v, want the keeper's lease %+v", l, k.Lease())
	}
	releaseRun()
	releaseRun() // releasing twice releases once
	releaseKey()
	waitFor(t, "a renewal of the run its second holder keeps", func() bool {
		held, _, _, _ := g.last()
		return slices.Equal(held, []string{"run_a"})
	})
	releaseAgain()
	_, _, before, _ := g.last()
	time.Sleep(100 * time.Millisecond)
	if _, _, after, _ := g.last(); after > before+1 { // one tick may have read the set before the release
		t.Fatalf("%d renewals after everything was released", after-before)
	}
}

// A run whose call could not be recorded is ended by its keeper once Neo4j answers, tried
// again every tick until then and never again after; while it is left, the keeper's own
// sweep waits, so that the run is not ended as interrupted first.
func TestLeaseKeeperEndsUnrecordedRunsOnceNeo4jIsBack(t *testing.T) {
	g := &leaseGraph{unavailable: true}
	k := &LeaseKeeper{Graph: g, Term: 30 * time.Millisecond}
	k.EndUnrecorded(model.UnrecordedCall{RunID: "run_early"}) // nothing before Start
	k.Start()
	defer k.Stop()
	k.EndUnrecorded(model.UnrecordedCall{AccountID: "acct", RunID: "run_cut", Claim: "claim_1", ModelCalls: 2})
	waitFor(t, "tries while Neo4j is unavailable", func() bool { tries, _ := g.tries("run_cut"); return tries >= 3 })
	if _, sweeps := g.tries("run_cut"); sweeps != 0 {
		t.Fatalf("%d sweeps while a run's cause waited to be recorded, want none", sweeps)
	}
	g.setUnavailable(false)
	waitFor(t, "a sweep once the run is ended", func() bool { _, sweeps := g.tries("run_cut"); return sweeps >= 2 })
	ended, _ := g.tries("run_cut")
	time.Sleep(50 * time.Millisecond)
	if tries, _ := g.tries("run_cut"); tries != ended {
		t.Fatalf("%d tries to end the run after it was ended, want none", tries-ended)
	}
	if tries, _ := g.tries("run_early"); tries != 0 {
		t.Fatalf("a run told of before Start was tried %d times", tries)
	}
}
