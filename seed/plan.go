package seed

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ctxgraph/ctxgraph/client"
)

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
		body: func(func(string) string) any { return client.Conversation{Title: title, At: at} }})
	for i := 0; i < cfg.Participants; i++ {
		pt := participantBank[i]
		k := p.namedKey("p" + strconv.Itoa(i))
		p.participants = append(p.participants, k)
		at := p.tick(1, 3)
		p.add(&op{branch: 0, method: http.MethodPost, path: "/v1/conversations/{}/participants", pathKey: conv, idKey: k,
			body: func(func(string) string) any {
				return client.Participant{Kind: "model", Name: pt.name, Provider: pt.provider, Model: pt.model, At: at}
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
			return client.Fork{ParentBranchID: id(parentKey), ForkAfterMessageID: id(afterKey), Name: name, At: at}
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
			body := client.Message{Role: "user", Content: userText, At: at}
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
			return client.Run{ParticipantID: id(participant), RuntimeKind: runtimeKind, TriggerMessageID: id(userKey), At: at}
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
			return client.Message{Role: "assistant", Content: answer, ParticipantID: id(participant), RunID: id(runKey),
				ParentMessageIDs: []string{id(userKey)}, At: at}
		}})
	p.counts.Messages++
	at = p.tick(0, 1)
	p.add(&op{branch: bi, method: http.MethodPatch, path: "/v1/runs/{}", pathKey: runKey,
		body: func(func(string) string) any { return client.RunEnd{Status: "completed", At: at} }})

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
			body := client.ToolCall{Tool: tool, Arguments: args, CallID: callID, At: at}
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
			return client.ToolResult{Status: "deferred", Result: mustJSON(pickerWaiting(r, topic)), Retryable: flag(false),
				PrivacyClass: "user_private", ToolVersion: "picker/2.3.0", At: at}
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
			return client.ToolResult{Status: "failed", Error: &e, Retryable: flag(retryable), PrivacyClass: privacy,
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
			memory := client.Memory{
				Summary: clipRunes(m.summary, 200), Data: mustJSON(m.data), Confidence: &mem.confidence,
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
			body := client.ToolResult{Status: "succeeded", Result: result, Retryable: flag(false), PrivacyClass: privacy,
				Visibility: visibility, ToolVersion: kind.version(), At: at, Memories: []client.Memory{memory}}
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

// flag returns a pointer to b. The generator sends retryable with every result, false
// included, as it always has: the bytes it writes are among the benchmark's figures.
func flag(b bool) *bool { return &b }

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
