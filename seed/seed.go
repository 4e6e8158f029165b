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
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
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

// Client says where the generator's requests go: to Handler in-process when it is set,
// otherwise over HTTP to BaseURL.
type Client struct {
	// Handler serves the requests in-process (an api.Server).
	Handler http.Handler
	// HTTP sends the requests to BaseURL when Handler is nil; nil means http.DefaultClient.
	HTTP *http.Client
	// BaseURL is the server's address, for example http://127.0.0.1:8080.
	BaseURL string
	// Key is the bearer API key sent with every request.
	Key string
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

// RequestError is a request the server did not answer with a 2xx status.
type RequestError struct {
	Method, Path string
	Status       int
	// Request and Response are the bodies sent and received (clipped).
	Request, Response string
}

// Error names the request, the status and both bodies.
func (e *RequestError) Error() string {
	return fmt.Sprintf("%s %s answered %d: %s (request body: %s)", e.Method, e.Path, e.Status, e.Response, e.Request)
}

// Generate plans the conversation for cfg and writes it through the API.
func Generate(ctx context.Context, c Client, cfg Config) (Summary, error) {
	if err := cfg.check(); err != nil {
		return Summary{}, err
	}
	p := newPlanner(cfg)
	p.plan()

	e := &executor{client: c, slots: p.slots}
	if c.Handler == nil && e.client.HTTP == nil {
		e.client.HTTP = http.DefaultClient
	}
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

// The plan: every request in order, with symbolic keys where a server id goes. Bodies are
// built when sent, so large payloads never sit in memory all at once.

const keyConversation = "conv"

type op struct {
	// branch is the index of the branch whose writer sends the request.
	branch int
	method string
	// path holds "{}" where the id of pathKey goes.
	path    string
	pathKey string
	// body builds the request body; id resolves a key to its server id.
	body func(id func(key string) string) any
	// idKey receives the answer's id (artifactId for a tool result), branchKey its branchId,
	// memKeys its memoryIds.
	idKey     string
	branchKey string
	memKeys   []string
}

// slot is where a key's server id arrives; done is closed once id is set.
type slot struct {
	done chan struct{}
	id   string
}

type branchState struct {
	key, name     string
	parent        int
	depth         int
	rounds        int
	lineageRounds int
	// lastMessage is the newest message of the lineage; lastOwnMessage the branch's own.
	lastMessage, lastOwnMessage string
	lastRun, lastRunParticipant string
	// topics maps a topic to the newest memory about it in the branch's lineage.
	topics map[string]string
	// retryLater holds failed calls of this branch to retry in its next round;
	// awaitingUser its deferred calls that a later round may resolve.
	retryLater   []pendingCall
	awaitingUser []pendingCall
}

// pendingCall is a call of an earlier round that a later round follows up.
type pendingCall struct {
	key   string
	kind  toolKind
	topic string
	// args are the exact arguments, repeated by a retry.
	args json.RawMessage
	// seed generates the eventual result.
	seed uint64
}

type planner struct {
	cfg          Config
	rng          *rand.Rand
	ops          []*op
	slots        map[string]*slot
	branches     []*branchState
	participants []string
	start, clock time.Time
	counts       Counts
	next         int
}

func newPlanner(cfg Config) *planner {
	start := cfg.Start
	if start.IsZero() {
		start = DefaultStart
	}
	start = start.UTC().Truncate(time.Second)
	return &planner{
		cfg: cfg, rng: rand.New(rand.NewPCG(uint64(cfg.Seed), 0x9e3779b97f4a7c15)),
		slots: map[string]*slot{}, start: start, clock: start,
		counts: Counts{ResultsByTool: map[string]int{}, MemoriesByPrivacy: map[string]int{}, MemoriesByFreshness: map[string]int{}},
	}
}

// key makes a new symbolic key with the given prefix.
func (p *planner) key(prefix string) string {
	p.next++
	k := prefix + strconv.Itoa(p.next)
	p.slots[k] = &slot{done: make(chan struct{})}
	return k
}

func (p *planner) namedKey(k string) string {
	p.slots[k] = &slot{done: make(chan struct{})}
	return k
}

func (p *planner) add(o *op) { p.ops = append(p.ops, o) }

// tick advances the event clock by lo to hi seconds and returns the new time.
func (p *planner) tick(lo, hi int) string {
	p.clock = p.clock.Add(time.Duration(lo+p.rng.IntN(hi-lo+1)) * time.Second)
	return p.clock.Format(time.RFC3339)
}

func (p *planner) chance(f float64) bool { return p.rng.Float64() < f }

func (p *planner) plan() {
	cfg := p.cfg
	conv := p.namedKey(keyConversation)
	title := cfg.Title
	if title == "" {
		title = fmt.Sprintf("synthetic tool-heavy conversation (seed %d, %d rounds, %d branches, %d participants)",
			cfg.Seed, cfg.Rounds, cfg.Branches, cfg.Participants)
	}
	main := &branchState{key: p.namedKey("b0"), name: "main", parent: -1, topics: map[string]string{}}
	p.branches = append(p.branches, main)
	at := p.clock.Format(time.RFC3339)
	p.add(&op{branch: 0, method: http.MethodPost, path: "/v1/conversations", idKey: conv, branchKey: main.key,
		body: func(func(string) string) any { return conversationBody{Title: title, At: at} }})
	for i := 0; i < cfg.Participants; i++ {
		pt := participantBank[i]
		k := p.namedKey("p" + strconv.Itoa(i))
		p.participants = append(p.participants, k)
		at := p.tick(1, 3)
		p.add(&op{branch: 0, method: http.MethodPost, path: "/v1/conversations/{}/participants", pathKey: conv, idKey: k,
			body: func(func(string) string) any {
				return participantBody{Kind: "model", Name: pt.name, Provider: pt.provider, Model: pt.model, At: at}
			}})
	}

	forkAt := make([]int, cfg.Branches)
	for k := 1; k < cfg.Branches; k++ {
		forkAt[k] = max(1, k*cfg.Rounds/cfg.Branches)
	}
	nextFork := 1
	for i := 0; i <= cfg.Rounds; i++ {
		forked := -1
		for nextFork < cfg.Branches && forkAt[nextFork] <= i {
			forked = p.fork(nextFork)
			nextFork++
		}
		if i == cfg.Rounds {
			break
		}
		b := forked
		if b < 0 {
			b = p.rng.IntN(len(p.branches))
		}
		p.round(i, b)
	}
	// Failed calls still waiting for a retry when the plan ends are never retried.
	for _, b := range p.branches {
		p.counts.UnretriedFailures += len(b.retryLater)
	}
}

// fork creates branch k after the newest own message of a parent with rounds of its own.
func (p *planner) fork(k int) int {
	var candidates []int
	for i, b := range p.branches {
		if b.lastOwnMessage != "" {
			candidates = append(candidates, i)
		}
	}
	parent := 0
	switch r := p.rng.Float64(); {
	case len(candidates) == 0 || r < 0.3:
		parent = 0
	case r < 0.65:
		parent = candidates[len(candidates)-1]
	default:
		parent = candidates[p.rng.IntN(len(candidates))]
	}
	from := p.branches[parent]
	b := &branchState{
		key: p.namedKey("b" + strconv.Itoa(k)), name: fmt.Sprintf("what-if-%d", k), parent: parent,
		depth: from.depth + 1, lineageRounds: from.lineageRounds, lastMessage: from.lastMessage,
		topics: make(map[string]string, len(from.topics)),
	}
	for t, m := range from.topics {
		b.topics[t] = m
	}
	p.branches = append(p.branches, b)
	at := p.tick(5, 40)
	parentKey, afterKey, name := from.key, from.lastOwnMessage, b.name
	p.add(&op{branch: k, method: http.MethodPost, path: "/v1/conversations/{}/branches", pathKey: keyConversation, idKey: b.key,
		body: func(id func(string) string) any {
			return forkBody{ParentBranchID: id(parentKey), ForkAfterMessageID: id(afterKey), Name: name, At: at}
		}})
	return len(p.branches) - 1
}

// round plans one tool round on branch bi.
func (p *planner) round(i, bi int) {
	b := p.branches[bi]
	participant := p.participants[i%len(p.participants)]
	runtimeKind := "chat"
	if len(p.participants) > 1 {
		runtimeKind = "multi_model"
	}
	kinds := make([]toolKind, 1+p.rng.IntN(3))
	for j := range kinds {
		kinds[j] = p.pickKind()
	}
	topics := make([]string, len(kinds))
	for j, k := range kinds {
		topics[j] = p.topic(k)
	}

	// The user's message.
	p.tick(30, 240)
	userKey := p.key("m")
	userText := userMessage(p.rng, kinds[0], topics[0])
	prev := b.lastMessage
	at := p.tick(0, 2)
	p.add(&op{branch: bi, method: http.MethodPost, path: "/v1/branches/{}/messages", pathKey: b.key, idKey: userKey,
		body: func(id func(string) string) any {
			body := messageBody{Role: "user", Content: userText, At: at}
			if prev != "" {
				body.ParentMessageIDs = []string{id(prev)}
			}
			return body
		}})
	p.counts.Messages++

	// The run.
	runKey := p.key("r")
	at = p.tick(1, 3)
	p.add(&op{branch: bi, method: http.MethodPost, path: "/v1/branches/{}/runs", pathKey: b.key, idKey: runKey,
		body: func(id func(string) string) any {
			return runBody{ParticipantID: id(participant), RuntimeKind: runtimeKind, TriggerMessageID: id(userKey), At: at}
		}})
	p.counts.Runs++

	var facts []string
	// Follow-ups of earlier rounds: retries of failed calls, documents the user has picked.
	later := b.retryLater
	b.retryLater = nil
	for _, f := range later {
		retry := p.call(bi, runKey, f.kind, f.args, f.key)
		facts = append(facts, p.success(bi, retry, f.kind, f.topic, f.seed))
	}
	waiting := b.awaitingUser
	b.awaitingUser = nil
	for _, f := range waiting {
		if p.chance(0.55) {
			facts = append(facts, p.success(bi, f.key, f.kind, f.topic, f.seed))
			p.counts.DeferredResolved++
		} else {
			b.awaitingUser = append(b.awaitingUser, f)
		}
	}

	for j, kind := range kinds {
		topic := topics[j]
		args := arguments(p.rng, kind, topic)
		callKey := p.call(bi, runKey, kind, args, "")
		resultSeed := p.rng.Uint64()
		switch {
		case kind == kindPicker:
			p.deferred(bi, callKey, topic)
			b.awaitingUser = append(b.awaitingUser, pendingCall{key: callKey, kind: kind, topic: topic, args: args, seed: resultSeed})
			facts = append(facts, "I asked you to pick the document ("+topic+") and will continue once you do.")
		case kind == kindApproval:
			p.counts.Pending++
			facts = append(facts, "The email about "+topic+" is waiting for your approval before it is sent.")
		case kind.canFail() && p.chance(0.11):
			retryable := p.chance(0.85)
			p.failure(bi, callKey, kind, retryable)
			facts = append(facts, "The "+kind.tool()+" call failed ("+topic+").")
			switch r := p.rng.Float64(); {
			case !retryable:
				p.counts.UnretriedFailures++
			case r < 0.6:
				retry := p.call(bi, runKey, kind, args, callKey)
				facts = append(facts, p.success(bi, retry, kind, topic, resultSeed))
			case r < 0.85:
				b.retryLater = append(b.retryLater, pendingCall{key: callKey, kind: kind, topic: topic, args: args, seed: resultSeed})
			default:
				p.counts.UnretriedFailures++
			}
		default:
			facts = append(facts, p.success(bi, callKey, kind, topic, resultSeed))
		}
	}

	// The assistant's answer and the run's end.
	answerKey := p.key("m")
	answer := assistantMessage(p.rng, facts)
	at = p.tick(2, 20)
	p.add(&op{branch: bi, method: http.MethodPost, path: "/v1/branches/{}/messages", pathKey: b.key, idKey: answerKey,
		body: func(id func(string) string) any {
			return messageBody{Role: "assistant", Content: answer, ParticipantID: id(participant), RunID: id(runKey),
				ParentMessageIDs: []string{id(userKey)}, At: at}
		}})
	p.counts.Messages++
	at = p.tick(0, 1)
	p.add(&op{branch: bi, method: http.MethodPatch, path: "/v1/runs/{}", pathKey: runKey,
		body: func(func(string) string) any { return finishBody{Status: "completed", At: at} }})

	b.rounds++
	b.lineageRounds++
	b.lastMessage, b.lastOwnMessage = answerKey, answerKey
	b.lastRun, b.lastRunParticipant = runKey, participant
}

// call plans a tool call of a run; retryOf is the key of the failed call it retries.
func (p *planner) call(bi int, runKey string, kind toolKind, args json.RawMessage, retryOf string) string {
	k := p.key("t")
	callID := "call_" + strings.TrimPrefix(k, "t")
	tool := kind.tool()
	at := p.tick(1, 6)
	p.add(&op{branch: bi, method: http.MethodPost, path: "/v1/runs/{}/tool-calls", pathKey: runKey, idKey: k,
		body: func(id func(string) string) any {
			body := toolCallBody{Tool: tool, Arguments: args, CallID: callID, At: at}
			if retryOf != "" {
				body.RetryOf = id(retryOf)
			}
			return body
		}})
	p.counts.ToolCalls++
	if retryOf != "" {
		p.counts.Retries++
	}
	return k
}

func (p *planner) deferred(bi int, callKey, topic string) {
	at := p.tick(1, 4)
	seed := p.rng.Uint64()
	p.add(&op{branch: bi, method: http.MethodPost, path: "/v1/tool-calls/{}/result", pathKey: callKey,
		body: func(func(string) string) any {
			r := rand.New(rand.NewPCG(seed, 1))
			return toolResultBody{Status: "deferred", Result: mustJSON(pickerWaiting(r, topic)), PrivacyClass: "user_private",
				ToolVersion: "picker/2.3.0", At: at}
		}})
	p.counts.ToolResults++
	p.counts.Deferred++
	p.counts.ResultsByTool[kindPicker.tool()]++
}

func (p *planner) failure(bi int, callKey string, kind toolKind, retryable bool) {
	e := pickError(p.rng, kind, retryable)
	at := p.tick(2, 35)
	privacy, visibility := p.privacy(kind), p.visibility()
	p.add(&op{branch: bi, method: http.MethodPost, path: "/v1/tool-calls/{}/result", pathKey: callKey,
		body: func(func(string) string) any {
			return toolResultBody{Status: "failed", Error: &e, Retryable: retryable, PrivacyClass: privacy,
				Visibility: visibility, ToolVersion: kind.version(), At: at}
		}})
	p.counts.ToolResults++
	p.counts.Failed++
	if retryable {
		p.counts.FailedRetryable++
	}
	p.counts.ResultsByTool[kind.tool()]++
}

// success plans a successful result with its one memory and returns a sentence for the
// assistant's answer.
func (p *planner) success(bi int, callKey string, kind toolKind, topic string, seed uint64) string {
	b := p.branches[bi]
	at := p.tick(1, 25)
	observed := p.clock
	privacy, visibility := p.privacy(kind), p.visibility()
	var shared []string
	if visibility == "participant" && len(p.participants) > 1 && p.chance(0.15) {
		shared = []string{p.participants[p.rng.IntN(len(p.participants))]}
	}

	// Content that does not need the payload is decided here, from the plan's stream.
	mem := memoryPlan{freshness: kind.freshness(p.rng), confidence: float64(55+p.rng.IntN(44)) / 100}
	switch mem.freshness {
	case "volatile":
		if p.chance(0.3) {
			mem.staleAfter = observed.Add(time.Duration(15+p.rng.IntN(345)) * time.Minute).Format(time.RFC3339)
		}
	case "bounded":
		if p.chance(0.1) {
			mem.staleAfter = observed.Add(time.Duration(1+p.rng.IntN(14)) * 24 * time.Hour).Format(time.RFC3339)
		}
	}
	if earlier, ok := b.topics[topic]; ok {
		switch r := p.rng.Float64(); {
		case r < 0.45:
			mem.supersedes = earlier
			p.counts.Supersedes++
		case r < 0.51:
			mem.conflictsWith = earlier
			p.counts.Conflicts++
		}
	}
	memKey := p.key("k")
	b.topics[topic] = memKey

	p.add(&op{branch: bi, method: http.MethodPost, path: "/v1/tool-calls/{}/result", pathKey: callKey, memKeys: []string{memKey},
		body: func(id func(string) string) any {
			r := rand.New(rand.NewPCG(seed, 2))
			result, m := payload(r, kind, topic)
			memory := memoryBody{
				Summary: clipRunes(m.summary, 200), Data: mustJSON(m.data), Confidence: mem.confidence,
				ConfidenceSource: "tool_result", FreshnessClass: mem.freshness, StaleAfter: mem.staleAfter,
				RevalidateWith: []string{kind.tool()},
			}
			if privacy == "google_derived" {
				memory.SafeSummary = m.safeSummary
			}
			if mem.supersedes != "" {
				memory.Supersedes = []string{id(mem.supersedes)}
			}
			if mem.conflictsWith != "" {
				memory.ConflictsWith = []string{id(mem.conflictsWith)}
			}
			body := toolResultBody{Status: "succeeded", Result: result, PrivacyClass: privacy, Visibility: visibility,
				ToolVersion: kind.version(), At: at, Memories: []memoryBody{memory}}
			for _, s := range shared {
				body.SharedWithParticipants = append(body.SharedWithParticipants, id(s))
			}
			return body
		}})
	p.counts.ToolResults++
	p.counts.Succeeded++
	p.counts.Memories++
	p.counts.ResultsByTool[kind.tool()]++
	p.counts.MemoriesByPrivacy[privacy]++
	p.counts.MemoriesByFreshness[mem.freshness]++
	return kind.fact(topic)
}

type memoryPlan struct {
	freshness                 string
	confidence                float64
	staleAfter                string
	supersedes, conflictsWith string
}

func (p *planner) privacy(kind toolKind) string {
	switch kind {
	case kindSearch, kindCSV:
		return "internal"
	case kindCRM:
		if p.chance(0.7) {
			return "oauth_derived"
		}
		return "user_private"
	case kindGmail:
		return "google_derived"
	}
	return "user_private"
}

// visibility is left to the server's default (participant) with one participant, except
// for the conversation-wide records; with several, a mix.
func (p *planner) visibility() string {
	r := p.rng.Float64()
	if len(p.participants) == 1 {
		if r < 0.08 {
			return "conversation"
		}
		return ""
	}
	switch {
	case r < 0.35:
		return "participant"
	case r < 0.88:
		return "branch"
	}
	return "conversation"
}

// The executor sends the plan.

type executor struct {
	client      Client
	slots       map[string]*slot
	bytes       atomic.Int64
	requests    atomic.Int64
	blobs       atomic.Int64
	resultBytes atomic.Int64
}

// id is a key's server id, or "" when it was never filled.
func (e *executor) id(key string) string {
	s, ok := e.slots[key]
	if !ok {
		return ""
	}
	select {
	case <-s.done:
		return s.id
	default:
		return ""
	}
}

func (e *executor) sequential(ctx context.Context, ops []*op) error {
	for _, o := range ops {
		if err := e.run(ctx, o, false, nil); err != nil {
			return err
		}
	}
	return nil
}

// parallel runs one writer per branch; a writer waits for the keys it needs from other
// branches. The plan's order is a valid order of every key's creation, so the earliest
// unsent request never waits and the writers cannot deadlock.
func (e *executor) parallel(ctx context.Context, ops []*op, branches, limit int) error {
	queues := make([][]*op, branches)
	for _, o := range ops {
		queues[o.branch] = append(queues[o.branch], o)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for _, q := range queues {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, o := range q {
				if err := e.run(ctx, o, true, sem); err != nil {
					cancel(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

// resolver turns keys into ids for one request, waiting for them when wait is set.
type resolver struct {
	ctx  context.Context
	e    *executor
	wait bool
	err  error
}

func (r *resolver) id(key string) string {
	s, ok := r.e.slots[key]
	if !ok {
		r.fail(fmt.Errorf("seed: internal error: unknown key %q", key))
		return ""
	}
	if r.wait {
		select {
		case <-s.done:
		case <-r.ctx.Done():
			r.fail(context.Cause(r.ctx))
			return ""
		}
		return s.id
	}
	select {
	case <-s.done:
		return s.id
	default:
		r.fail(fmt.Errorf("seed: internal error: key %q used before it was created", key))
		return ""
	}
}

func (r *resolver) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// answer is the part of a create response the generator needs.
type answer struct {
	ID         string   `json:"id"`
	BranchID   string   `json:"branchId"`
	ArtifactID string   `json:"artifactId"`
	MemoryIDs  []string `json:"memoryIds"`
}

func (e *executor) run(ctx context.Context, o *op, wait bool, sem chan struct{}) error {
	res := &resolver{ctx: ctx, e: e, wait: wait}
	path := o.path
	if o.pathKey != "" {
		path = strings.Replace(path, "{}", res.id(o.pathKey), 1)
	}
	body := o.body(res.id)
	if res.err != nil {
		return res.err
	}
	payload, err := model.EncodeJSON(body) // no HTML escaping: text as a client writes it
	if err != nil {
		return fmt.Errorf("seed: %s %s: encoding the body: %w", o.method, o.path, err)
	}
	if tr, ok := body.(toolResultBody); ok {
		e.resultBytes.Add(int64(len(tr.Result)))
		if len(tr.Result) > BlobThreshold {
			e.blobs.Add(1)
		}
	}
	if sem != nil {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	status, resp, err := e.send(ctx, o.method, path, payload)
	if sem != nil {
		<-sem
	}
	if err != nil {
		return err
	}
	e.requests.Add(1)
	e.bytes.Add(int64(len(payload)))
	if status < 200 || status > 299 {
		return &RequestError{Method: o.method, Path: path, Status: status, Request: clip(payload, 2000), Response: clip(resp, 2000)}
	}
	if o.idKey == "" && o.branchKey == "" && len(o.memKeys) == 0 {
		return nil
	}
	var a answer
	if err := json.Unmarshal(resp, &a); err != nil {
		return fmt.Errorf("seed: %s %s answered %d with a body that is not the expected JSON (%v): %s", o.method, path, status, err, clip(resp, 2000))
	}
	if o.idKey != "" {
		id := a.ID
		if id == "" {
			id = a.ArtifactID
		}
		if id == "" {
			return fmt.Errorf("seed: %s %s answered %d without an id: %s", o.method, path, status, clip(resp, 2000))
		}
		e.fill(o.idKey, id)
	}
	if o.branchKey != "" {
		if a.BranchID == "" {
			return fmt.Errorf("seed: %s %s answered %d without a branchId: %s", o.method, path, status, clip(resp, 2000))
		}
		e.fill(o.branchKey, a.BranchID)
	}
	if len(o.memKeys) > 0 {
		if len(a.MemoryIDs) != len(o.memKeys) {
			return fmt.Errorf("seed: %s %s answered %d memoryIds, want %d: %s", o.method, path, len(a.MemoryIDs), len(o.memKeys), clip(resp, 2000))
		}
		for i, k := range o.memKeys {
			e.fill(k, a.MemoryIDs[i])
		}
	}
	return nil
}

func (e *executor) fill(key, id string) {
	s := e.slots[key]
	s.id = id
	close(s.done)
}

// send makes one request and returns the status and the response body.
func (e *executor) send(ctx context.Context, method, path string, payload []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(e.client.BaseURL, "/")+path, bytes.NewReader(payload))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if e.client.Key != "" {
		req.Header.Set("Authorization", "Bearer "+e.client.Key)
	}
	if e.client.Handler != nil {
		rec := httptest.NewRecorder()
		e.client.Handler.ServeHTTP(rec, req)
		return rec.Code, rec.Body.Bytes(), nil
	}
	resp, err := e.client.HTTP.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("seed: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("seed: %s %s: reading the response: %w", method, path, err)
	}
	return resp.StatusCode, out, nil
}

func mustJSON(v any) json.RawMessage {
	b, err := model.EncodeJSON(v)
	if err != nil {
		panic(err)
	}
	return b
}

func clip(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// The request bodies, with the contract's field names (DESIGN §5).
type (
	conversationBody struct {
		Title string `json:"title"`
		At    string `json:"at,omitempty"`
	}
	participantBody struct {
		Kind     string `json:"kind"`
		Name     string `json:"name"`
		Provider string `json:"provider,omitempty"`
		Model    string `json:"model,omitempty"`
		At       string `json:"at,omitempty"`
	}
	forkBody struct {
		ParentBranchID     string `json:"parentBranchId"`
		ForkAfterMessageID string `json:"forkAfterMessageId"`
		Name               string `json:"name"`
		At                 string `json:"at,omitempty"`
	}
	messageBody struct {
		Role             string   `json:"role"`
		Content          string   `json:"content"`
		ParticipantID    string   `json:"participantId,omitempty"`
		RunID            string   `json:"runId,omitempty"`
		ParentMessageIDs []string `json:"parentMessageIds,omitempty"`
		At               string   `json:"at,omitempty"`
	}
	runBody struct {
		ParticipantID    string `json:"participantId"`
		RuntimeKind      string `json:"runtimeKind"`
		TriggerMessageID string `json:"triggerMessageId,omitempty"`
		At               string `json:"at,omitempty"`
	}
	finishBody struct {
		Status string `json:"status"`
		At     string `json:"at,omitempty"`
	}
	toolCallBody struct {
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
		CallID    string          `json:"callId"`
		RetryOf   string          `json:"retryOf,omitempty"`
		At        string          `json:"at,omitempty"`
	}
	toolError struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	toolResultBody struct {
		Status                 string          `json:"status"`
		Result                 json.RawMessage `json:"result,omitempty"`
		Error                  *toolError      `json:"error,omitempty"`
		Retryable              bool            `json:"retryable"`
		PrivacyClass           string          `json:"privacyClass,omitempty"`
		Visibility             string          `json:"visibility,omitempty"`
		SharedWithParticipants []string        `json:"sharedWithParticipants,omitempty"`
		ToolVersion            string          `json:"toolVersion,omitempty"`
		Memories               []memoryBody    `json:"memories,omitempty"`
		At                     string          `json:"at,omitempty"`
	}
	memoryBody struct {
		Summary          string          `json:"summary"`
		Data             json.RawMessage `json:"data,omitempty"`
		SafeSummary      string          `json:"safeSummary,omitempty"`
		Confidence       float64         `json:"confidence"`
		ConfidenceSource string          `json:"confidenceSource,omitempty"`
		FreshnessClass   string          `json:"freshnessClass"`
		StaleAfter       string          `json:"staleAfter,omitempty"`
		RevalidateWith   []string        `json:"revalidateWith,omitempty"`
		Supersedes       []string        `json:"supersedes,omitempty"`
		ConflictsWith    []string        `json:"conflictsWith,omitempty"`
	}
)

// The synthetic content.

type participantSpec struct{ name, provider, model string }

var participantBank = []participantSpec{
	{"analyst-gpt", "openai", "gpt-4.1"},
	{"reviewer-claude", "anthropic", "claude-sonnet-4-5"},
	{"researcher-gemini", "google", "gemini-2.5-pro"},
	{"drafter-mistral", "mistral", "mistral-large-latest"},
}

type toolKind int

const (
	kindSearch toolKind = iota
	kindCSV
	kindCRM
	kindTicket
	kindGmail
	kindFile
	kindPicker
	kindApproval
)

// kindWeights is the mix of tool calls: searches, CSV reads and connected-app records
// dominate; generated files, Gmail threads, document pickers (deferred) and approvals
// (pending) are rarer.
var kindWeights = []struct {
	kind   toolKind
	weight int
}{
	{kindSearch, 27}, {kindCSV, 18}, {kindCRM, 15}, {kindTicket, 11}, {kindGmail, 5},
	{kindFile, 10}, {kindPicker, 3}, {kindApproval, 2},
}

func (p *planner) pickKind() toolKind {
	total := 0
	for _, w := range kindWeights {
		total += w.weight
	}
	n := p.rng.IntN(total)
	for _, w := range kindWeights {
		if n < w.weight {
			return w.kind
		}
		n -= w.weight
	}
	return kindSearch
}

func (k toolKind) tool() string {
	return [...]string{"web_search", "read_csv", "salesforce_get_account", "zendesk_get_ticket", "gmail_get_thread",
		"generate_file", "pick_document", "send_email"}[k]
}

func (k toolKind) version() string {
	return [...]string{"search/4.1.0", "csv/1.8.2", "salesforce/59.0", "zendesk/2.4.1", "gmail/1.0.7",
		"files/3.2.0", "picker/2.3.0", "mail/1.1.0"}[k]
}

func (k toolKind) canFail() bool {
	return k == kindSearch || k == kindCSV || k == kindCRM || k == kindTicket || k == kindGmail
}

func (k toolKind) freshness(r *rand.Rand) string {
	f := r.Float64()
	switch k {
	case kindSearch:
		if f < 0.7 {
			return "volatile"
		}
		return "bounded"
	case kindCSV:
		if f < 0.75 {
			return "bounded"
		}
		return "durable"
	case kindCRM:
		switch {
		case f < 0.4:
			return "volatile"
		case f < 0.85:
			return "bounded"
		}
		return "durable"
	case kindTicket:
		if f < 0.8 {
			return "volatile"
		}
		return "bounded"
	case kindGmail:
		return "bounded"
	}
	return "durable"
}

func (k toolKind) fact(topic string) string {
	switch k {
	case kindSearch:
		return "I searched the web for " + topic + "."
	case kindCSV:
		return "I read " + topic + "."
	case kindCRM:
		return "I pulled the Salesforce account " + topic + "."
	case kindTicket:
		return "I looked up ticket " + topic + "."
	case kindGmail:
		return "I read the Gmail thread about " + topic + "."
	case kindFile:
		return "I generated " + topic + "."
	case kindPicker:
		return "You picked the document for " + topic + "."
	}
	return "Done: " + topic + "."
}

var (
	companies = []string{"Northwind", "Contoso", "Fabrikam", "Globex", "Initech", "Umbrella Health", "Stark Logistics",
		"Wayne Foods", "Acme Robotics", "Hooli", "Vandelay Imports", "Tyrell Systems", "Cyberdyne", "Oceanic Air",
		"Blue Sun", "Monarch Freight", "Soylent Labs", "Massive Dynamic", "Pied Piper", "Gringotts Capital",
		"Aperture Science", "Wonka Confections", "Sirius Cybernetics", "Duff Beverages"}
	regions  = []string{"EU", "NA", "APAC", "LATAM", "MEA", "UK", "DACH", "Nordics"}
	subjects = []string{"battery storage subsidies", "lithium spot price", "container freight rates", "EU AI Act obligations",
		"SOC 2 Type II requirements", "GPU cloud pricing", "interest rate outlook", "solar panel tariffs",
		"semiconductor lead times", "carbon credit prices", "cold-chain logistics market", "warehouse robotics vendors",
		"B2B SaaS churn benchmarks", "cyber insurance premiums", "DORA compliance deadline", "office lease rates",
		"heat pump adoption", "copper futures", "air cargo capacity", "payments fraud trends"}
	datasets = []string{"revenue", "bookings", "pipeline", "churn", "inventory", "shipments", "support_volume", "headcount",
		"marketing_spend", "ar_aging"}
	quarters   = []string{"2025-q3", "2025-q4", "2026-q1", "2026-q2"}
	sources    = []string{"reuters.com", "ft.com", "bloomberg.com", "theverge.com", "gartner.com", "statista.com", "europa.eu", "mckinsey.com", "wsj.com", "techcrunch.com"}
	people     = []string{"Priya Raman", "Dev Anand", "Marta Kowalczyk", "Gareth Lloyd", "Aiko Tanaka", "Lucas Moreau", "Sofia Rossi", "Kwame Mensah", "Elena Petrova", "Tom Becker"}
	stages     = []string{"Prospecting", "Qualification", "Proposal", "Negotiation", "Closed Won", "Renewal Pending"}
	priorities = []string{"low", "normal", "high", "urgent"}
	statuses   = []string{"new", "open", "pending", "on-hold", "solved"}
	words      = strings.Fields(`the market analysts expect growth demand pricing supply quarter year report outlook
		rose fell percent according to data new regulation companies customers contract renewal forecast revenue
		margin cost increase decline stable region segment vendor adoption survey shows risk rate policy capacity
		signals shift strong weak early late trend investment budget share leading major smaller mid-size firms`)
)

// topic picks a subject for a call of kind. The pools are small enough that subjects come
// back, so later memories supersede or contradict earlier ones.
func (p *planner) topic(k toolKind) string {
	r := p.rng
	switch k {
	case kindSearch:
		return subjects[r.IntN(len(subjects))] + " " + regions[r.IntN(3)]
	case kindCSV:
		return "finance/" + datasets[r.IntN(len(datasets))] + "_" + quarters[r.IntN(len(quarters))] + ".csv"
	case kindCRM:
		return companies[r.IntN(len(companies))]
	case kindTicket:
		return fmt.Sprintf("ZD-%d", 48100+r.IntN(40))
	case kindGmail:
		return companies[r.IntN(len(companies))] + " contract renewal"
	case kindFile:
		return fmt.Sprintf("%s-%s-summary.%s", strings.ToLower(regions[r.IntN(len(regions))]), datasets[r.IntN(len(datasets))],
			[]string{"xlsx", "pdf", "pptx", "png"}[r.IntN(4)])
	case kindPicker:
		return "signed MSA for " + companies[r.IntN(len(companies))]
	}
	return "the " + companies[r.IntN(len(companies))] + " renewal update"
}

func arguments(r *rand.Rand, k toolKind, topic string) json.RawMessage {
	switch k {
	case kindSearch:
		return mustJSON(map[string]any{"query": topic, "num": 8 + r.IntN(5), "recency": []string{"day", "week", "month"}[r.IntN(3)]})
	case kindCSV:
		return mustJSON(map[string]any{"path": topic, "delimiter": ",", "maxRows": 5000})
	case kindCRM:
		return mustJSON(map[string]any{"accountName": topic, "include": []string{"contacts", "opportunities", "activity"}})
	case kindTicket:
		return mustJSON(map[string]any{"ticketId": topic, "includeComments": true})
	case kindGmail:
		return mustJSON(map[string]any{"query": "subject:(" + topic + ")", "maxMessages": 6})
	case kindFile:
		return mustJSON(map[string]any{"name": topic, "template": "quarterly-summary", "sources": 1 + r.IntN(4)})
	case kindPicker:
		return mustJSON(map[string]any{"prompt": "Please pick the " + topic, "mimeTypes": []string{"application/pdf"}})
	}
	return mustJSON(map[string]any{"to": strings.ToLower(strings.ReplaceAll(people[r.IntN(len(people))], " ", ".")) + "@example.com",
		"subject": "Re: " + topic, "body": sentence(r, 30+r.IntN(40))})
}

func sentence(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	b.WriteByte('.')
	s := b.String()
	return strings.ToUpper(s[:1]) + s[1:]
}

func hexID(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return hex.EncodeToString(b)
}

func userMessage(r *rand.Rand, k toolKind, topic string) string {
	switch k {
	case kindSearch:
		return []string{"What's the latest on " + topic + "? Search and summarise the key numbers.",
			"Can you look up recent news about " + topic + "?",
			"Find current sources on " + topic + " and tell me what changed."}[r.IntN(3)]
	case kindCSV:
		return []string{"Load " + topic + " and give me the totals by region.",
			"Which accounts drive most of the numbers in " + topic + "?",
			"Check " + topic + " for anomalies against last quarter."}[r.IntN(3)]
	case kindCRM:
		return "Where do we stand with " + topic + "? Pull the account from Salesforce."
	case kindTicket:
		return "What's the status of support ticket " + topic + "?"
	case kindGmail:
		return "Summarise my email thread about the " + topic + "."
	case kindFile:
		return "Generate " + topic + " from what we have so far."
	case kindPicker:
		return "Use the " + topic + " from my drive to check the renewal terms."
	}
	return "Draft and send an email about " + topic + "."
}

func assistantMessage(r *rand.Rand, facts []string) string {
	var b strings.Builder
	for _, f := range facts {
		b.WriteString(f)
		b.WriteByte(' ')
	}
	b.WriteString(sentence(r, 12+r.IntN(25)))
	return b.String()
}

type toolMemory struct {
	summary, safeSummary string
	data                 any
}

// payload generates a successful result of kind and the memory derived from it.
func payload(r *rand.Rand, k toolKind, topic string) (json.RawMessage, toolMemory) {
	switch k {
	case kindSearch:
		return searchResults(r, topic)
	case kindCSV:
		return csvBody(r, topic)
	case kindCRM:
		return crmAccount(r, topic)
	case kindTicket:
		return ticket(r, topic)
	case kindGmail:
		return gmailThread(r, topic)
	case kindFile:
		return generatedFile(r, topic)
	case kindPicker:
		return pickedDocument(r, topic)
	}
	return mustJSON(map[string]any{"sent": true}), toolMemory{summary: "Email sent: " + topic}
}

func searchResults(r *rand.Rand, query string) (json.RawMessage, toolMemory) {
	type hit struct {
		Title     string `json:"title"`
		URL       string `json:"url"`
		Source    string `json:"source"`
		Published string `json:"published"`
		Snippet   string `json:"snippet"`
	}
	n := 6 + r.IntN(5)
	hits := make([]hit, n)
	for i := range hits {
		src := sources[r.IntN(len(sources))]
		title := strings.ToUpper(query[:1]) + query[1:] + ": " + sentence(r, 5+r.IntN(5))
		hits[i] = hit{Title: title, URL: fmt.Sprintf("https://www.%s/%s/%s", src, quarters[r.IntN(len(quarters))], hexID(r, 6)),
			Source: src, Published: fmt.Sprintf("2026-%02d-%02d", 1+r.IntN(11), 1+r.IntN(28)), Snippet: sentence(r, 14+r.IntN(18))}
	}
	pct := r.IntN(40) - 15
	raw := mustJSON(map[string]any{"query": query, "engine": "brave", "totalResults": 1000 + r.IntN(90000), "results": hits})
	return raw, toolMemory{
		summary: fmt.Sprintf("Search '%s': %d results; %s reports %+d%% change (%s).", query, n, hits[0].Source, pct, hits[0].Published),
		data:    map[string]any{"query": query, "topUrl": hits[0].URL, "changePct": pct},
	}
}

func csvBody(r *rand.Rand, path string) (json.RawMessage, toolMemory) {
	rows := 70 + r.IntN(500)
	if r.Float64() < 0.05 {
		rows = 1350 + r.IntN(200) // about 100 KB: the blob store's side of the 64 KiB line
	}
	var b strings.Builder
	b.Grow(rows * 80)
	b.WriteString("date,region,account,sku,units,unit_price,revenue,currency,channel\n")
	totals := map[string]int{}
	for i := 0; i < rows; i++ {
		region := regions[r.IntN(len(regions))]
		units := 1 + r.IntN(400)
		price := 20 + r.IntN(980)
		totals[region] += units * price
		fmt.Fprintf(&b, "2026-%02d-%02d,%s,%s,SKU-%05d,%d,%d.%02d,%d,EUR,%s\n", 1+r.IntN(12), 1+r.IntN(28), region,
			companies[r.IntN(len(companies))], r.IntN(30000), units, price, r.IntN(100), units*price,
			[]string{"direct", "partner", "online"}[r.IntN(3)])
	}
	best, bestRev := "", 0
	for _, region := range regions {
		if totals[region] > bestRev {
			best, bestRev = region, totals[region]
		}
	}
	raw := mustJSON(map[string]any{"path": path, "rows": rows, "columns": 9, "encoding": "utf-8", "csv": b.String()})
	return raw, toolMemory{
		summary: fmt.Sprintf("%s: %d rows; top region %s with EUR %.2fM revenue.", path, rows, best, float64(bestRev)/1e6),
		data:    map[string]any{"path": path, "rows": rows, "topRegion": best, "topRegionRevenue": bestRev},
	}
}

func crmAccount(r *rand.Rand, name string) (json.RawMessage, toolMemory) {
	contacts := make([]map[string]any, 3+r.IntN(6))
	for i := range contacts {
		person := people[r.IntN(len(people))]
		contacts[i] = map[string]any{"name": person, "title": []string{"VP Finance", "CTO", "Procurement Lead", "Head of IT", "COO"}[r.IntN(5)],
			"email":         strings.ToLower(strings.ReplaceAll(person, " ", ".")) + "@" + strings.ToLower(strings.Fields(name)[0]) + ".example",
			"lastContacted": fmt.Sprintf("2026-%02d-%02d", 1+r.IntN(11), 1+r.IntN(28))}
	}
	stage := stages[r.IntN(len(stages))]
	arr := (50 + r.IntN(950)) * 1000
	renewal := fmt.Sprintf("2027-%02d-%02d", 1+r.IntN(12), 1+r.IntN(28))
	raw := mustJSON(map[string]any{
		"object": "account", "id": "001" + hexID(r, 7), "name": name, "owner": people[r.IntN(len(people))],
		"industry": []string{"Logistics", "Healthcare", "Retail", "Manufacturing", "Finance"}[r.IntN(5)],
		"arr":      arr, "currency": "EUR", "stage": stage, "renewalDate": renewal, "healthScore": 40 + r.IntN(60),
		"contacts":          contacts,
		"openOpportunities": []map[string]any{{"id": "006" + hexID(r, 7), "name": name + " expansion", "amount": arr / 4, "closeDate": renewal}},
		"notes":             sentence(r, 30+r.IntN(120)),
	})
	return raw, toolMemory{
		summary: fmt.Sprintf("%s: stage %s, ARR EUR %dk, renewal %s.", name, stage, arr/1000, renewal),
		data:    map[string]any{"account": name, "stage": stage, "arr": arr, "renewalDate": renewal},
	}
}

func ticket(r *rand.Rand, id string) (json.RawMessage, toolMemory) {
	comments := make([]map[string]any, 2+r.IntN(4))
	for i := range comments {
		comments[i] = map[string]any{"author": people[r.IntN(len(people))], "public": r.IntN(2) == 0,
			"createdAt": fmt.Sprintf("2026-%02d-%02dT%02d:%02d:00Z", 1+r.IntN(11), 1+r.IntN(28), r.IntN(24), r.IntN(60)),
			"body":      sentence(r, 25+r.IntN(25))}
	}
	status, priority := statuses[r.IntN(len(statuses))], priorities[r.IntN(len(priorities))]
	company := companies[r.IntN(len(companies))]
	raw := mustJSON(map[string]any{"id": id, "subject": company + ": " + sentence(r, 6), "status": status, "priority": priority,
		"requester": people[r.IntN(len(people))], "organization": company, "tags": []string{"billing", "sso", "api"}[:1+r.IntN(3)],
		"comments": comments})
	return raw, toolMemory{
		summary: fmt.Sprintf("Ticket %s (%s): %s, priority %s, %d comments.", id, company, status, priority, len(comments)),
		data:    map[string]any{"ticketId": id, "status": status, "priority": priority},
	}
}

func gmailThread(r *rand.Rand, subject string) (json.RawMessage, toolMemory) {
	msgs := make([]map[string]any, 2+r.IntN(4))
	for i := range msgs {
		msgs[i] = map[string]any{"from": people[r.IntN(len(people))], "date": fmt.Sprintf("2026-%02d-%02d", 1+r.IntN(11), 1+r.IntN(28)),
			"snippet": sentence(r, 20+r.IntN(20))}
	}
	uplift := 2 + r.IntN(7)
	raw := mustJSON(map[string]any{"threadId": hexID(r, 8), "subject": "Re: " + subject, "labels": []string{"INBOX", "IMPORTANT"}, "messages": msgs})
	return raw, toolMemory{
		summary:     fmt.Sprintf("Gmail thread '%s': %d messages; counterpart asks for a %d%% uplift cap.", subject, len(msgs), uplift),
		safeSummary: "A Gmail thread about a contract renewal was read; its content is restricted (google_derived).",
		data:        map[string]any{"messages": len(msgs), "upliftCapPct": uplift},
	}
}

func generatedFile(r *rand.Rand, name string) (json.RawMessage, toolMemory) {
	fileID := "file_" + hexID(r, 8)
	size := 20000 + r.IntN(900000)
	sum := sha256.Sum256([]byte(fileID))
	raw := mustJSON(map[string]any{"fileId": fileID, "name": name, "bytes": size, "sha256": hex.EncodeToString(sum[:]),
		"url": "https://files.example.com/" + fileID, "pages": 1 + r.IntN(12)})
	return raw, toolMemory{
		summary: fmt.Sprintf("Generated %s (fileId %s, %d KB).", name, fileID, size/1000),
		data:    map[string]any{"fileId": fileID, "name": name},
	}
}

func pickerWaiting(r *rand.Rand, topic string) map[string]any {
	return map[string]any{"state": "awaiting_user", "pickerId": "pk_" + hexID(r, 6), "prompt": "Please pick the " + topic,
		"expiresInSeconds": 86400}
}

func pickedDocument(r *rand.Rand, topic string) (json.RawMessage, toolMemory) {
	docID := "doc_" + hexID(r, 8)
	raw := mustJSON(map[string]any{"documentId": docID, "name": strings.ReplaceAll(topic, " ", "_") + ".pdf", "pages": 4 + r.IntN(30),
		"pickedAt": "after user action", "excerpt": sentence(r, 40)})
	return raw, toolMemory{
		summary: fmt.Sprintf("User picked %s (documentId %s).", topic, docID),
		data:    map[string]any{"documentId": docID},
	}
}

func pickError(r *rand.Rand, k toolKind, retryable bool) toolError {
	if retryable {
		e := []toolError{
			{"rate_limited", "HTTP 429 Too Many Requests: retry after 20 seconds"},
			{"timeout", k.tool() + ": upstream did not answer within 30s"},
			{"upstream_unavailable", "HTTP 503 Service Unavailable from the " + k.tool() + " backend"},
			{"connection_reset", "read tcp 10.0.3.17:52114: connection reset by peer"},
		}
		return e[r.IntN(len(e))]
	}
	e := []toolError{
		{"invalid_argument", "column 'revenue_eur' does not exist"},
		{"permission_denied", "the connected account lacks scope " + k.tool() + ".read"},
		{"not_found", "no record matches the given id"},
	}
	return e[r.IntN(len(e))]
}
