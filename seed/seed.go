// Package seed generates synthetic, tool-heavy conversations through ctxgraph's REST API, for
// benchmarks and load tests. The generator is deterministic: a Config (its Seed included)
// always produces the same requests with the same bodies; only the ids the server answers
// differ between servers.
//
// Each round is a user message, a run, one to three tool calls whose results are drawn from
// a realistic mix (web search results, CSV bodies of 5 to 40 KB and now and then about 100 KB,
// CRM and ticket records, Gmail threads, generated files, failed retryable calls that are
// mostly retried with retryOf, a few deferred or pending calls), one memory per successful
// result (mixed freshness and privacy classes, some superseding or conflicting with an
// earlier memory of the same topic), an assistant message and the run's completion.
package seed

import (
	"context"
	"fmt"
	"time"

	"github.com/ctxgraph/ctxgraph/client"
)

// DefaultStart is the event time of the first write when Config.Start is zero.
var DefaultStart = time.Date(2026, time.June, 1, 8, 0, 0, 0, time.UTC)

// BlobThreshold is the server's default size above which a raw payload goes to the blob
// store; Counts.BlobResults counts the results over it.
const BlobThreshold = 64 << 10

// Config says what to generate.
type Config struct {
	// Rounds is the number of tool rounds in total, over all branches (at least 1).
	Rounds int
	// Branches is how many branches to use: 1 is main only. Branch k forks after round
	// k·Rounds/Branches, from main or from another branch that has rounds of its own.
	Branches int
	// Participants is how many model participants take part, 1 to 4 (1 or 4 in practice).
	// With more than one, runs rotate between them and some results are private to the
	// participant whose run produced them.
	Participants int
	// Seed makes the generator deterministic: the same Config produces the same requests.
	Seed int64
	// Start is the event time (`at`) of the first write; zero means DefaultStart.
	Start time.Time
	// Title is the conversation's title; empty means one naming the seed and size.
	Title string
	// Concurrency is how many requests may be in flight at once. 0 or 1 sends every request
	// in plan order. More writes each branch's requests in order but the branches in
	// parallel, which keeps each branch's request sequence deterministic, not the global one.
	Concurrency int
}

// Branch is one generated branch.
type Branch struct {
	ID   string
	Name string
	// ParentID is the branch it forked from; empty for main.
	ParentID string
	// Depth is the number of forks between the branch and main (0 for main).
	Depth int
	// Rounds is the number of rounds played on the branch itself; LineageRounds adds the
	// rounds it inherited from its ancestors up to each fork point.
	Rounds        int
	LineageRounds int
	// LastRunID is the branch's own last run and LastRunParticipantID the participant whose
	// run it was; both are empty when the branch has no rounds of its own.
	LastRunID            string
	LastRunParticipantID string
	// LastMessageID is the branch's own last message (empty without rounds).
	LastMessageID string
}

// Counts are the records the generator wrote. They follow from the Config alone, except the
// byte and blob counts, which follow from it too but are added up while sending.
type Counts struct {
	Requests        int64
	Messages        int
	Runs            int
	ToolCalls       int
	ToolResults     int
	Succeeded       int
	Failed          int
	FailedRetryable int
	// Retries counts the calls naming a failed call in retryOf; UnretriedFailures the
	// failed calls left without a retry.
	Retries           int
	UnretriedFailures int
	// Deferred counts deferred results; DeferredResolved those later given a final result;
	// Pending the calls that never got a result.
	Deferred         int
	DeferredResolved int
	Pending          int
	Memories         int
	Supersedes       int
	Conflicts        int
	// ResultsByTool counts the tool results by tool name.
	ResultsByTool map[string]int
	// MemoriesByPrivacy and MemoriesByFreshness count the memories by privacy class (of
	// their artifact) and freshness class.
	MemoriesByPrivacy   map[string]int
	MemoriesByFreshness map[string]int
	// BlobResults counts the results over BlobThreshold bytes.
	BlobResults int64
	// ResultBytes is the sum of the tool results' JSON sizes.
	ResultBytes int64
}

// Summary is what a generation created.
type Summary struct {
	ConversationID string
	// Branches are the branches in creation order; Branches[0] is main.
	Branches []Branch
	// ParticipantIDs are the participants in rotation order.
	ParticipantIDs []string
	Counts         Counts
	// BytesWritten is the sum of the request bodies sent.
	BytesWritten int64
	// FirstEventAt and LastEventAt bound the event times (`at`) of the writes; an assembly
	// judged shortly after LastEventAt sees the freshest records as current.
	FirstEventAt time.Time
	LastEventAt  time.Time
	// Elapsed is how long the writes took.
	Elapsed time.Duration
}

// Deepest returns the branch with the most forks above it; among equals, the one with the
// most rounds in its lineage, then the last created.
func (s Summary) Deepest() Branch {
	var best Branch
	for i, b := range s.Branches {
		if i == 0 || b.Depth > best.Depth || (b.Depth == best.Depth && b.LineageRounds >= best.LineageRounds) {
			best = b
		}
	}
	return best
}

// LastRuns maps each branch id to its own last run id (branches without rounds left out).
func (s Summary) LastRuns() map[string]string {
	out := map[string]string{}
	for _, b := range s.Branches {
		if b.LastRunID != "" {
			out[b.ID] = b.LastRunID
		}
	}
	return out
}

// Generate plans the conversation for cfg and writes it through the API with c. A request
// the server refuses stops it with the *client.Error.
func Generate(ctx context.Context, c *client.Client, cfg Config) (Summary, error) {
	if err := cfg.check(); err != nil {
		return Summary{}, err
	}
	p := newPlanner(cfg)
	p.plan()

	e := &executor{client: c, slots: p.slots}
	start := time.Now()
	var err error
	if cfg.Concurrency <= 1 {
		err = e.sequential(ctx, p.ops)
	} else {
		err = e.parallel(ctx, p.ops, len(p.branches), cfg.Concurrency)
	}
	sum := Summary{
		Counts: p.counts, BytesWritten: e.bytes.Load(), Elapsed: time.Since(start),
		FirstEventAt: p.start, LastEventAt: p.clock,
	}
	sum.Counts.Requests = e.requests.Load()
	sum.Counts.BlobResults = e.blobs.Load()
	sum.Counts.ResultBytes = e.resultBytes.Load()
	sum.ConversationID = e.id(keyConversation)
	for _, pt := range p.participants {
		sum.ParticipantIDs = append(sum.ParticipantIDs, e.id(pt))
	}
	for _, b := range p.branches {
		out := Branch{ID: e.id(b.key), Name: b.name, Depth: b.depth, Rounds: b.rounds, LineageRounds: b.lineageRounds,
			LastRunID: e.id(b.lastRun), LastRunParticipantID: e.id(b.lastRunParticipant), LastMessageID: e.id(b.lastOwnMessage)}
		if b.parent >= 0 {
			out.ParentID = e.id(p.branches[b.parent].key)
		}
		sum.Branches = append(sum.Branches, out)
	}
	return sum, err
}

func (cfg Config) check() error {
	switch {
	case cfg.Rounds < 1:
		return fmt.Errorf("seed: Rounds is %d, want at least 1", cfg.Rounds)
	case cfg.Branches < 1:
		return fmt.Errorf("seed: Branches is %d, want at least 1", cfg.Branches)
	case cfg.Participants < 1 || cfg.Participants > len(participantBank):
		return fmt.Errorf("seed: Participants is %d, want 1 to %d", cfg.Participants, len(participantBank))
	}
	return nil
}
