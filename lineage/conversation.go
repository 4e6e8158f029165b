package lineage

import (
	"cmp"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxgraph/ctxgraph/extract"
	"github.com/ctxgraph/ctxgraph/model"
)

// The store's copy of a conversation. Every write increments the revision (rev) of the
// branch it writes on and stamps the nodes it creates or changes with the new value, so a
// copy that holds branch B at revision R is brought up to date by reading B's records
// stamped after R, whatever the length of the history. (A per-branch counter, not one per
// conversation: the branch is already locked by every write to it, so parallel writes on
// sibling branches never wait for each other or deadlock.) A deletion cannot be expressed as
// a stamped record; it increments the conversation's reset revision, and a copy read before
// that is read again in full. The copy is checked against the graph on every assembly, so
// several ctxgraph processes over one database stay correct; the copy only saves reading
// what has not changed.

// Record is one record of a conversation as the store read it, with the part of its
// candidate that does not depend on the lineage or the snapshot time built once (Base). It
// keeps what a snapshot needs of the record's properties, not the properties themselves: a
// copy of a long conversation is then mostly strings, which keeps the garbage collector's
// work on it small.
type Record struct {
	Kind model.RecordType
	ID   string
	// ElementID is Neo4j's element id of the record's node, by which an assembly's record
	// links it.
	ElementID  string
	BranchID   string
	Seq        int64
	Rev        int64
	RecordedAt time.Time
	PromotedAt *time.Time
	PromotedTo string
	// Baseline is the record's tokens in naive history replay.
	Baseline int
	Base     model.Candidate
	// Retryable is an artifact's (its call's outcome); ArgumentsSha256 a call's;
	// Supersedes and ConflictsWith a memory's edges as read.
	Retryable       bool
	ArgumentsSha256 string
	Supersedes      []string
	ConflictsWith   []string

	// ownerRun is the run that owns the record (for a tool call, the run that requested it).
	ownerRun *run
	// shared is set on a conversation-visible memory listed in the copy's shared.
	shared bool
}

// Run is a run as the store read it: its parent, and its status and end with the time the
// end was recorded.
type Run struct {
	ID                     string
	Rev                    int64
	ParentRunID, Status    string
	EndedAt, EndRecordedAt *time.Time
}

// run is what a snapshot needs of a run, shared by the records the run owns: a run's end is
// merged in place.
type run struct {
	known                  bool
	rev                    int64
	parentRunID, status    string
	endedAt, endRecordedAt *time.Time
}

// Conversation is a copy of one conversation's assembly-relevant records, holding each
// branch at the revision the store last read it at. Merges hold Lock; snapshots (Since,
// Select, RunAsOf, ElementIDs) hold RLock.
type Conversation struct {
	mu       sync.RWMutex
	id       string
	marks    map[string]int64
	resetRev int64
	byID     map[string]*Record
	// byBranch holds each branch's records in seq order.
	byBranch map[string][]*Record
	// shared lists the conversation-visible memories, which every branch may see.
	shared []*Record
	runs   map[string]*run
	// participants are the conversation's participants as its reads listed them
	// (participants.go), guarded by participantsMu.
	participantsMu sync.Mutex
	participants   map[string]model.Participant
	used           time.Time
	// sharedGen counts the changes to conversation-visible memories, runsGen the changes
	// to runs: with the revisions of a lineage's branches they say whether a lineage view
	// built earlier is still the lineage's current one.
	sharedGen, runsGen int64
	// views are the latest candidates built for each branch (view), guarded by viewMu so
	// that assemblies holding mu for reading can keep them.
	viewMu sync.Mutex
	views  map[string]*view
	// prefixRevs remembers seenRev's scans of ancestors, also guarded by viewMu.
	prefixRevs map[prefixKey]prefixRev
	// tallies count each branch's records for excludedRecords, also guarded by viewMu.
	tallies map[string]*branchTally
	// bytes is the heap the copy holds, as estimated (size.go): its records, runs and views.
	bytes atomic.Int64

	// What extending a view needs (extend.go): the merges in the order they were made
	// (log), the runs that changed (runLog), the records each run owns (byRun), the
	// artifacts answering each call (outcomes), the calls by run, tool and arguments
	// (repeats) and the calls naming each call in retryOf (retriers).
	log      []merged
	runLog   []string
	byRun    map[string][]*Record
	outcomes map[string][]*Record
	repeats  map[string][]*Record
	retriers map[string][]*Record
}

// merged is one merge of a record into the copy: added, or changed in place, with its
// baseline tokens before and after.
type merged struct {
	r                  *Record
	added              bool
	baseline, previous int
}

// Bytes is the heap the copy holds, as estimated from its records, runs and views.
func (c *Conversation) Bytes() int64 { return c.bytes.Load() }

// NewConversation returns an empty copy of a conversation whose deletions the graph counts
// at resetRev.
func NewConversation(id string, resetRev int64) *Conversation {
	return &Conversation{id: id, resetRev: resetRev, marks: map[string]int64{}, byID: map[string]*Record{},
		byBranch: map[string][]*Record{}, runs: map[string]*run{}}
}

// ID is the conversation's id.
func (c *Conversation) ID() string { return c.id }

// Lock and Unlock guard merges; RLock and RUnlock reads.
func (c *Conversation) Lock()    { c.mu.Lock() }
func (c *Conversation) Unlock()  { c.mu.Unlock() }
func (c *Conversation) RLock()   { c.mu.RLock() }
func (c *Conversation) RUnlock() { c.mu.RUnlock() }

// Merge applies records read from the graph; a record the copy already holds at the same
// or a newer revision is kept as it is, so merges may arrive in any order. The records new
// to the copy are sorted by seq and merged into their branch's list in one pass: a whole
// conversation, which a read lists a kind after another, would otherwise move the tail of
// its branch's list for each record. Merge the runs of a read (MergeRun) before its
// records.
func (c *Conversation) Merge(records ...*Record) {
	var added map[string][]*Record
	for _, r := range records {
		if c.merge(r) {
			if added == nil {
				added = map[string][]*Record{}
			}
			added[r.BranchID] = append(added[r.BranchID], r)
		}
	}
	for id, list := range added {
		c.byBranch[id] = mergeBySeq(c.byBranch[id], list)
	}
}

// mergeBySeq merges records into a branch's list in seq order; a record comes after those
// of its seq already listed.
func mergeBySeq(list, records []*Record) []*Record {
	bySeq := func(a, b *Record) int { return cmp.Compare(a.Seq, b.Seq) }
	slices.SortStableFunc(records, bySeq)
	if len(list) == 0 || list[len(list)-1].Seq <= records[0].Seq {
		return append(list, records...)
	}
	out := make([]*Record, 0, len(list)+len(records))
	for len(list) > 0 && len(records) > 0 {
		if records[0].Seq < list[0].Seq {
			out, records = append(out, records[0]), records[1:]
		} else {
			out, list = append(out, list[0]), list[1:]
		}
	}
	return append(append(out, list...), records...)
}

// merge applies one record, and reports whether it is new to the copy (for the caller to
// add to its branch's list).
func (c *Conversation) merge(r *Record) (added bool) {
	r.ownerRun = c.run(r.Base.OwnerRunID)
	if m := &r.Base.Memory; r.Kind == model.TypeMemory && m.Terms == nil {
		m.Terms = extract.Terms(m.Summary)
	}
	if old, ok := c.byID[r.ID]; ok {
		if old.Rev < r.Rev {
			// A changed record keeps its place: branch and seq never change.
			r.shared = old.shared
			c.bytes.Add(r.size() - old.size())
			c.log = append(c.log, merged{r: old, baseline: r.Baseline, previous: old.Baseline})
			c.bytes.Add(logCost)
			*old = *r
			c.stamped(r)
		}
		return false
	}
	c.stamped(r)
	c.byID[r.ID] = r
	c.bytes.Add(r.size())
	c.index(r)
	if r.Kind == model.TypeMemory && r.Base.Visibility == model.VisibilityConversation {
		c.shared = append(c.shared, r)
		r.shared = true
	}
	return true
}

// index notes a record added to the copy where extending a view looks for it.
func (c *Conversation) index(r *Record) {
	if c.byRun == nil {
		c.byRun, c.outcomes, c.repeats, c.retriers = map[string][]*Record{}, map[string][]*Record{}, map[string][]*Record{}, map[string][]*Record{}
	}
	c.log = append(c.log, merged{r: r, added: true, baseline: r.Baseline})
	// Its log entry, and its slots in the indexes.
	c.bytes.Add(logCost + 3*8)
	if id := r.Base.OwnerRunID; id != "" {
		c.byRun[id] = append(c.byRun[id], r)
	}
	switch r.Kind {
	case model.TypeArtifact:
		c.outcomes[r.Base.Artifact.ToolCallID] = append(c.outcomes[r.Base.Artifact.ToolCallID], r)
	case model.TypeToolCall:
		if key := repeatKey(r); key != "" {
			c.repeats[key] = append(c.repeats[key], r)
		}
		if of := r.Base.Call.RetryOf; of != "" {
			c.retriers[of] = append(c.retriers[of], r)
			c.bytes.Add(8)
		}
	}
}

// repeatKey is what identical repeats of a call share (retriesOf): its run, tool and
// arguments; empty for a call without arguments' hash.
func repeatKey(r *Record) string {
	if r.ArgumentsSha256 == "" {
		return ""
	}
	return r.Base.OwnerRunID + "\x00" + r.Base.Tool.Name + "\x00" + r.ArgumentsSha256
}

// stamped notes a change to a conversation-visible memory.
func (c *Conversation) stamped(r *Record) {
	if r.Kind == model.TypeMemory && r.Base.Visibility == model.VisibilityConversation {
		c.sharedGen++
	}
}

// Advance records the revision of a branch that a read was made at (its records merged).
func (c *Conversation) Advance(branchID string, rev int64) {
	if rev > c.marks[branchID] {
		c.marks[branchID] = rev
	}
}

// Since returns the branch revisions the copy holds and the reset revision it was read at:
// what the store reads the changes after.
func (c *Conversation) Since() (map[string]int64, int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make(map[string]int64, len(c.marks))
	for id, rev := range c.marks {
		out[id] = rev
	}
	return out, c.resetRev
}

// MergeRun applies a run read from the graph.
func (c *Conversation) MergeRun(in Run) {
	if r := c.run(in.ID); !r.known || r.rev < in.Rev {
		*r = run{known: true, rev: in.Rev, parentRunID: in.ParentRunID, status: in.Status,
			endedAt: in.EndedAt, endRecordedAt: in.EndRecordedAt}
		c.runsGen++
		c.runLog = append(c.runLog, in.ID)
	}
}

// run returns the run with an id, an empty placeholder until the run is merged (nil for no
// id).
func (c *Conversation) run(id string) *run {
	if id == "" {
		return nil
	}
	r, ok := c.runs[id]
	if !ok {
		r = &run{}
		c.runs[id] = r
		c.bytes.Add(runCost(id))
	}
	return r
}

// RunAsOf is a run's status and end as of a snapshot time; RunStatusRunning until the end
// of a run the copy holds was recorded, empty for a run it does not hold.
func (c *Conversation) RunAsOf(id string, t time.Time) (status string, endedAt *time.Time) {
	st := c.runs[id].asOf(t)
	return st.status, st.endedAt
}

// ElementIDs adds to out the element ids of the refs the copy holds, and returns the refs it
// does not.
func (c *Conversation) ElementIDs(refs []string, out map[string]string) (missing []string) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, ref := range refs {
		if r := c.byID[ref]; r != nil && r.ElementID != "" {
			out[ref] = r.ElementID
		} else {
			missing = append(missing, ref)
		}
	}
	return missing
}

// upTo returns a branch's records at or below seq, in seq order.
func (c *Conversation) upTo(branchID string, seq int64) []*Record {
	list := c.byBranch[branchID]
	n := sort.Search(len(list), func(i int) bool { return list[i].Seq > seq })
	return list[:n]
}
