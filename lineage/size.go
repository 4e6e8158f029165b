package lineage

import (
	"unsafe"

	"github.com/ctxgraph/ctxgraph/model"
)

// The copies are bounded in bytes (Cache): each record, run and view is charged an estimate
// of the heap it holds, from its struct sizes and the lengths of its strings and lists. The
// estimate leaves out what is small and fixed per conversation (maps of branches, marks,
// tallies); TestSizeEstimateFollowsTheHeap compares it with the heap a copy actually holds.

// stringCost is what a non-empty string or list costs beyond its bytes: the allocation's
// header and its rounding up to a size class, on average.
const stringCost = 16

var (
	recordSize    = int64(unsafe.Sizeof(Record{}))
	candidateSize = int64(unsafe.Sizeof(model.Candidate{}))
	runSize       = int64(unsafe.Sizeof(run{}))
	// entryCost is a map entry (byID, runs) with its share of the map's buckets, and a slot
	// of a branch's list.
	entryCost = int64(48 + 8)
	// logCost is an entry of the copy's log of merges (merged).
	logCost = int64(unsafe.Sizeof(merged{}))
)

func str(s string) int64 {
	if s == "" {
		return 0
	}
	return int64(len(s)) + stringCost
}

func strs(list []string) int64 {
	if len(list) == 0 {
		return 0
	}
	n := int64(16*len(list)) + stringCost
	for _, s := range list {
		n += str(s)
	}
	return n
}

// terms is what a memory's terms hold beyond its summary: their slots, and the summary's
// lower-cased copy that they point into when it has upper case (extract.Terms).
func terms(list []string, summary string) int64 {
	if len(list) == 0 {
		return 0
	}
	n := int64(16*len(list)) + stringCost
	at, from := uintptr(unsafe.Pointer(unsafe.StringData(list[0]))), uintptr(unsafe.Pointer(unsafe.StringData(summary)))
	if at < from || at >= from+uintptr(len(summary)) {
		n += str(summary)
	}
	return n
}

// size is what a record holds of the heap.
func (r *Record) size() int64 {
	n := recordSize + entryCost + str(r.ID) + str(r.ElementID) + str(r.BranchID) + str(r.PromotedTo) +
		str(r.ArgumentsSha256) + strs(r.Supersedes) + strs(r.ConflictsWith) + candidateStrings(&r.Base)
	if r.PromotedAt != nil {
		n += 24 + stringCost
	}
	return n
}

// candidateStrings is what a candidate's strings and lists hold beyond the struct.
func candidateStrings(c *model.Candidate) int64 {
	n := str(c.ID) + str(c.BranchID) + str(string(c.Visibility)) + str(c.OwnerParticipantID) + str(c.OwnerRunID) +
		str(c.OwnerRunParentID) + str(c.OwnerRunStatus) + strs(c.SharedWith) + str(c.PromotedTo) + str(c.PrivacyClass)
	m := &c.Message
	n += str(m.Role) + str(m.Content) + str(m.ParticipantName)
	if len(m.Stated) > 0 {
		n += int64(len(m.Stated))*int64(unsafe.Sizeof(model.StatedValue{})) + stringCost
		for _, v := range m.Stated {
			n += str(v.Text) + str(v.Locator)
		}
	}
	n += str(c.Tool.Name) + str(string(c.Tool.Status)) + str(c.Tool.ErrorCode) + str(c.Tool.ErrorMessage)
	n += str(c.Call.CallID) + str(c.Call.Arguments) + str(c.Call.ArgumentsRef) + str(c.Call.RetryOf) +
		strs(c.Call.RetriedBy) + strs(c.Call.ArtifactIDs)
	n += str(c.Artifact.ToolCallID)
	mem := &c.Memory
	n += str(mem.Summary) + terms(mem.Terms, mem.Summary) + str(mem.SafeSummary) + str(mem.Data) + str(mem.FreshnessClass) + strs(mem.RevalidateWith) +
		strs(mem.SourceArtifactIDs) + strs(mem.LiveSourceIDs) + strs(mem.RedactedSourceIDs) + strs(mem.SupersededBy) + strs(mem.ConflictsWith)
	if mem.Confidence != nil {
		n += 8 + stringCost
	}
	if mem.StaleAfter != nil {
		n += 24 + stringCost
	}
	rs := &c.RunState
	n += str(rs.RunID) + str(rs.State) + strs(rs.LoadedSkills) + strs(rs.ActiveProfiles) + strs(rs.DirectTools)
	return n
}

// size is what a view holds of the heap beyond the records it was built from: its
// candidates are copies of the records' (sharing their strings), with the lists built for
// the lineage (a call's outcomes and retries, a memory's supersessions and conflicts).
func (v *view) size() int64 {
	n := int64(cap(v.candidates)) * (candidateSize + 8)
	for _, c := range v.candidates {
		n += candidateLists(c)
	}
	return n
}

// candidateLists is what the lists a view builds for a candidate hold.
func candidateLists(c *model.Candidate) int64 {
	return strs(c.Call.RetriedBy) + strs(c.Call.ArtifactIDs) + strs(c.Memory.SupersededBy) + strs(c.Memory.ConflictsWith)
}

// runCost is what a run holds of the heap, with its entry in the copy.
func runCost(id string) int64 { return runSize + entryCost + str(id) + 2*(24+stringCost) }
