package cypher

import (
	"context"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
)

// The assembler's copy of a conversation. Every write increments the revision (rev) of the
// branch it writes on and stamps the nodes it creates or changes with the new value
// (migration 0004), so a copy that holds branch B at revision R is brought up to date by
// reading B's records stamped after R: one index seek per label and changed branch, whatever
// the length of the history. (A per-branch counter, not one per conversation: the branch is
// already locked by every write to it, so parallel writes on sibling branches never wait for
// each other or deadlock.) A deletion cannot be expressed as a stamped record; it increments
// Conversation.resetRev, and a copy read before that is read again in full. The copy is
// checked against the graph on every assembly, so several ctxgraph processes over one
// database stay correct; the cache only saves reading what has not changed.

// Record kinds of a conversation copy.
const (
	recMessage    = "message"
	recCall       = "tool_call"
	recArtifact   = "artifact"
	recMemory     = "memory"
	recCheckpoint = "checkpoint"
	recSkills     = "skill_state"
)

// DefaultRecordCacheSize is how many records the assembler keeps cached across
// conversations before it drops the least recently used conversation.
const DefaultRecordCacheSize = 500_000

// cachedRecord is one record as ConversationRecords projected it, with the part of its
// candidate that does not depend on the lineage or the snapshot time built once.
type cachedRecord struct {
	kind string
	id   string
	// elementID is Neo4j's element id of the record's node, by which RecordAssembly links it.
	elementID  string
	branchID   string
	seq        int64
	rev        int64
	recordedAt time.Time
	promotedAt *time.Time
	promotedTo string
	baseline   int
	base       model.Candidate
	// retryable is an artifact's (its call's outcome); argumentsSha256 a call's;
	// supersedes and conflictsWith a memory's edges as read.
	retryable       bool
	argumentsSha256 string
	supersedes      []string
	conflictsWith   []string
	// ownerRun is the run that owns the record (for a tool call, the run that requested it).
	ownerRun *cachedRun
	// shared is set on a conversation-visible memory listed in the copy's shared.
	shared bool
}

// newCachedRecord keeps what the snapshot needs of a record's properties, not the
// properties themselves: a copy of a long conversation is then mostly strings, which keeps
// the garbage collector's work on it small.
func newCachedRecord(kind string, p props) *cachedRecord {
	return &cachedRecord{kind: kind, id: p.str("id"), elementID: p.str("eid"), branchID: p.str("branchId"), seq: p.i64("seq"), rev: p.i64("rev"),
		recordedAt: p.time("recordedAt"), promotedAt: p.timePtr("promotedAt"), promotedTo: p.str("promotedTo"),
		baseline: int(p.i64("baselineTokens")), base: baseCandidate(kind, p), retryable: p.boolean("retryable"),
		argumentsSha256: p.str("argumentsSha256"), supersedes: p.strs("supersedes"), conflictsWith: p.strs("conflictsWith")}
}

// conversationRecords is a copy of one conversation's assembly-relevant records, holding
// each branch at the revision in marks.
type conversationRecords struct {
	mu       sync.RWMutex
	id       string
	marks    map[string]int64
	resetRev int64
	byID     map[string]*cachedRecord
	// byBranch holds each branch's records in seq order.
	byBranch map[string][]*cachedRecord
	// shared lists the conversation-visible memories, which every branch may see.
	shared []*cachedRecord
	// runs are shared by the records they own: a run's end is merged in place.
	runs map[string]*cachedRun
	used time.Time
	// sharedGen counts the changes to conversation-visible memories, runsGen the changes
	// to runs: with the revisions of a lineage's branches they say whether a lineage view
	// built earlier is still the lineage's current one.
	sharedGen, runsGen int64
	// views are the latest candidates built for each branch (lineageView), guarded by
	// viewMu so that assemblies holding mu for reading can keep them.
	viewMu sync.Mutex
	views  map[string]*lineageView
	// prefixRevs remembers seenRev's scans of ancestors, also guarded by viewMu.
	prefixRevs map[prefixKey]prefixRev
	// tallies count each branch's records for excludedRecords, also guarded by viewMu.
	tallies map[string]*branchTally
}

func newConversationRecords(id string) *conversationRecords {
	return &conversationRecords{id: id, marks: map[string]int64{}, byID: map[string]*cachedRecord{}, byBranch: map[string][]*cachedRecord{}, runs: map[string]*cachedRun{}}
}

// merge applies records read from the graph; a record the copy already holds at the same or
// a newer revision is kept as it is, so merges may arrive in any order.
func (c *conversationRecords) merge(kind string, records []any) {
	for _, v := range records {
		r := newCachedRecord(kind, asProps(v))
		r.ownerRun = c.run(r.base.OwnerRunID)
		if old, ok := c.byID[r.id]; ok {
			if old.rev < r.rev {
				// A changed record keeps its place: branch and seq never change.
				r.shared = old.shared
				*old = *r
				c.stamped(r)
			}
			continue
		}
		c.stamped(r)
		c.byID[r.id] = r
		list := c.byBranch[r.branchID]
		i := len(list)
		if i > 0 && list[i-1].seq > r.seq {
			i = sort.Search(len(list), func(j int) bool { return list[j].seq > r.seq })
		}
		list = append(list, nil)
		copy(list[i+1:], list[i:])
		list[i] = r
		c.byBranch[r.branchID] = list
		if kind == recMemory && r.base.Visibility == "conversation" {
			c.shared = append(c.shared, r)
			r.shared = true
		}
	}
}

// stamped notes a change to a conversation-visible memory.
func (c *conversationRecords) stamped(r *cachedRecord) {
	if r.kind == recMemory && r.base.Visibility == "conversation" {
		c.sharedGen++
	}
}

// advance records the branch revisions a read was made at (its records are merged) and
// returns the branches' ids.
func (c *conversationRecords) advance(branches []any) []string {
	ids := make([]string, len(branches))
	for i, v := range branches {
		b := asProps(v)
		ids[i] = b.str("id")
		if rev := b.i64("rev"); rev > c.marks[ids[i]] {
			c.marks[ids[i]] = rev
		}
	}
	return ids
}

// since returns the branch revisions the copy holds, as ConversationRecords takes them.
func (c *conversationRecords) since() map[string]any {
	out := make(map[string]any, len(c.marks))
	for id, rev := range c.marks {
		out[id] = rev
	}
	return out
}

// cachedRun is what a snapshot needs of a run: its parent, and its status and end with the
// time the end was recorded.
type cachedRun struct {
	known                  bool
	rev                    int64
	parentRunID, status    string
	endedAt, endRecordedAt *time.Time
}

// mergeRuns applies runs read from the graph; merge it before the records they own.
func (c *conversationRecords) mergeRuns(runs []any) {
	for _, v := range runs {
		p := asProps(v)
		if r := c.run(p.str("id")); !r.known || r.rev < p.i64("rev") {
			*r = cachedRun{known: true, rev: p.i64("rev"), parentRunID: p.str("parentRunId"), status: p.str("status"),
				endedAt: p.timePtr("endedAt"), endRecordedAt: p.timePtr("endRecordedAt")}
			c.runsGen++
		}
	}
}

// run returns the run with an id, an empty placeholder until the run is merged (nil for no
// id).
func (c *conversationRecords) run(id string) *cachedRun {
	if id == "" {
		return nil
	}
	r, ok := c.runs[id]
	if !ok {
		r = &cachedRun{}
		c.runs[id] = r
	}
	return r
}

// upTo returns a branch's records at or below seq, in seq order.
func (c *conversationRecords) upTo(branchID string, seq int64) []*cachedRecord {
	list := c.byBranch[branchID]
	n := sort.Search(len(list), func(i int) bool { return list[i].seq > seq })
	return list[:n]
}

// recordCache holds conversation copies up to a number of records in all.
type recordCache struct {
	// full and delta count the reads of whole conversations and of changes since a copy;
	// shared the snapshots that took over a lineage view built before.
	full, delta, shared atomic.Int64

	mu       sync.Mutex
	limit    int
	convs    map[string]*conversationRecords
	ofBranch map[string]string
	// reading holds the full reads in flight, by account and branch; each channel closes
	// when its read has stored its copy or failed.
	reading map[string]chan struct{}
}

func newRecordCache(limit int) *recordCache {
	return &recordCache{limit: limit, convs: map[string]*conversationRecords{}, ofBranch: map[string]string{},
		reading: map[string]chan struct{}{}}
}

// firstRead is called by a request that found no copy for a branch (key: account and
// branch). When no other request is reading that branch's conversation in full, it returns
// lead: the caller reads it and calls done once it has stored the copy or failed (done may
// be called again). Otherwise it waits until that read ends, and the caller looks for the
// copy again. Without it, the first assemblies of a conversation that arrive together each
// read it whole: 16 clients starting on a 1,000-round conversation took up to 6 s each.
func (rc *recordCache) firstRead(ctx context.Context, key string) (lead bool, done func(), err error) {
	rc.mu.Lock()
	if ch, ok := rc.reading[key]; ok {
		rc.mu.Unlock()
		select {
		case <-ch:
			return false, nil, nil
		case <-ctx.Done():
			return false, nil, ctx.Err()
		}
	}
	ch := make(chan struct{})
	rc.reading[key] = ch
	rc.mu.Unlock()
	return true, sync.OnceFunc(func() {
		rc.mu.Lock()
		delete(rc.reading, key)
		rc.mu.Unlock()
		close(ch)
	}), nil
}

// lookup returns the copy of the conversation a branch belongs to, or nil; known is false
// when the cache has not seen the branch.
func (rc *recordCache) lookup(accountID, branchID string) (c *conversationRecords, known bool) {
	if rc == nil {
		return nil, true
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	convID, known := rc.ofBranch[accountID+"/"+branchID]
	if !known {
		return nil, false
	}
	return rc.conversation(accountID, convID), true
}

// conversation returns the copy of a conversation, or nil; rc.mu is held.
func (rc *recordCache) conversation(accountID, conversationID string) *conversationRecords {
	c := rc.convs[accountID+"/"+conversationID]
	if c != nil {
		c.used = time.Now()
	}
	return c
}

// lookupConversation returns the copy of a conversation, or nil.
func (rc *recordCache) lookupConversation(accountID, conversationID string) *conversationRecords {
	if rc == nil {
		return nil
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.conversation(accountID, conversationID)
}

// store keeps a copy with the branches it was read with, dropping the least recently used
// copies beyond the limit.
func (rc *recordCache) store(accountID string, branchIDs []string, c *conversationRecords) {
	if rc == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	c.used = time.Now()
	for _, b := range branchIDs {
		rc.ofBranch[accountID+"/"+b] = c.id
	}
	rc.convs[accountID+"/"+c.id] = c
	for {
		total := 0
		var oldest string
		for k, x := range rc.convs {
			x.mu.RLock()
			total += len(x.byID)
			x.mu.RUnlock()
			if oldest == "" || x.used.Before(rc.convs[oldest].used) {
				oldest = k
			}
		}
		if total <= rc.limit || len(rc.convs) <= 1 {
			return
		}
		delete(rc.convs, oldest)
	}
}

// drop forgets a conversation (after its deletion).
func (rc *recordCache) drop(accountID, conversationID string) {
	if rc == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	delete(rc.convs, accountID+"/"+conversationID)
}

// RecordCacheStats counts the assembler's conversation reads since the store opened: full
// reads of a whole conversation, and delta reads of the changes since a cached copy; and the
// snapshots whose candidates were a lineage view built before (SharedViews).
type RecordCacheStats struct {
	FullReads, DeltaReads, SharedViews int64
}

// RecordCacheStats reports how the assembler has read conversations so far.
func (s *Store) RecordCacheStats() RecordCacheStats {
	if s.records == nil {
		return RecordCacheStats{}
	}
	return RecordCacheStats{FullReads: s.records.full.Load(), DeltaReads: s.records.delta.Load(), SharedViews: s.records.shared.Load()}
}

// GCPercent is the garbage-collection target ctxgraph runs with unless GOGC is set. The
// cached conversation copies are a large heap that lives as long as the process, and every
// assembly allocates its candidates afresh: at Go's default of 100 the collector would scan
// the whole cache every time the assemblies have allocated as much again.
const GCPercent = 400

// TuneGarbageCollector applies GCPercent unless the GOGC environment variable says
// otherwise, and, unless GOMEMLIMIT does, a soft memory limit of a quarter of the machine's
// memory (at least 1 GiB): GCPercent lets the heap grow to five times what is live, and the
// limit makes the collector run sooner instead when that would not fit. The ctxgraph server
// and the benchmark call it at start.
func TuneGarbageCollector() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(max(memTotal()/4, 1<<30))
	}
}

// memTotal is the machine's memory in bytes (MemTotal in /proc/meminfo), 0 when unknown.
func memTotal() int64 {
	body, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}
