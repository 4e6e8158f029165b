package cypher

import (
	"context"
	"errors"
	"sync"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/ctxgraph/ctxgraph/extract"
	"github.com/ctxgraph/ctxgraph/lineage"
	"github.com/ctxgraph/ctxgraph/model"
)

// conversationRecords is the assembler's read of a conversation (ConversationRecords): a
// row per record read, and a head row.
var conversationRecords = newQuery[conversationRecordsParams, recordRow]("ConversationRecords")

type conversationRecordsParams struct {
	AccountID     string `param:"accountId"`
	BranchID      string `param:"branchId"`
	ParticipantID string `param:"participantId"`
	RunID         string `param:"runId,null"`
	// Since maps each branch to the revision the copy holds it at.
	Since map[string]int64 `param:"since"`
}

// recordRow is one row of a ConversationRecords answer: a record of a kind as a map
// projection, or the head (kind "head").
type recordRow struct {
	Kind   string `col:"kind"`
	Record props  `col:"record"`
}

// conversationRead is a ConversationRecords answer put together: the head's fields, and
// the records of each kind in the order the rows came (p and run are the requesting
// participant and run).
type conversationRead struct {
	ConversationID string
	ResetRev       int64
	// Instructions are the versions of the conversation's instructions.
	Instructions props
	Branches     []any
	Messages     []props
	Calls        []props
	Artifacts    []props
	Memories     []props
	Checkpoints  []props
	Skills       []props
	Runs         []props
	Participants []any
	P            props
	Run          props
}

// gather puts the rows of a ConversationRecords answer together; found is false when it
// has no head (the branch is unknown to the account).
func gather(rows []recordRow) (read conversationRead, found bool) {
	for _, row := range rows {
		r := row.Record
		if row.Kind != "head" {
			if list := read.kind(row.Kind); list != nil {
				*list = append(*list, r)
			}
			continue
		}
		found = true
		read.ConversationID, read.ResetRev = r.str("conversationId"), r.i64("resetRev")
		read.Instructions, read.P, read.Run = asProps(r["instructions"]), asProps(r["p"]), asProps(r["run"])
		read.Branches, _ = r["branches"].([]any)
		read.Participants, _ = r["participants"].([]any)
	}
	return read, found
}

// branchConversation reads the conversation a branch belongs to.
var branchConversation = newQuery[branchParams, conversationIDRow]("BranchConversation")

// branchParams name a branch of an account.
type branchParams struct {
	AccountID string `param:"accountId"`
	BranchID  string `param:"branchId"`
}

// conversationIDRow is an answer that names a conversation.
type conversationIDRow struct {
	ConversationID string `col:"conversationId"`
}

// readConversation reads the records changed since the given branch revisions; when since
// is empty, the whole conversation: its head, then its records (readWhole).
func (s *Store) readConversation(ctx context.Context, accountID string, req model.AssemblyRequest, since map[string]int64) (conversationRead, error) {
	head := headParams{AccountID: accountID, BranchID: req.BranchID, ParticipantID: req.ParticipantID, RunID: req.RunID}
	whole := len(since) == 0
	var rows []recordRow
	var err error
	if whole {
		rows, err = conversationHead.autoAll(ctx, s, neo4j.AccessModeRead, head)
	} else {
		rows, err = conversationRecords.autoAll(ctx, s, neo4j.AccessModeRead, conversationRecordsParams{AccountID: accountID,
			BranchID: req.BranchID, ParticipantID: req.ParticipantID, RunID: req.RunID, Since: since})
	}
	if err != nil {
		return conversationRead{}, err
	}
	read, found := gather(rows)
	if !found {
		e := model.NotFound("branch", req.BranchID)
		e.Field = "branchId"
		return conversationRead{}, e
	}
	if whole {
		if err := s.readWhole(ctx, accountID, &read); err != nil {
			return conversationRead{}, err
		}
	}
	s.records.CountRead(whole)
	return read, nil
}

// conversationHead reads the head of a branch's conversation alone (ConversationHead): the
// first statement of a whole read.
var conversationHead = newQuery[headParams, recordRow]("ConversationHead")

// headParams are ConversationRecords' but the revisions.
type headParams struct {
	AccountID     string `param:"accountId"`
	BranchID      string `param:"branchId"`
	ParticipantID string `param:"participantId"`
	RunID         string `param:"runId,null"`
}

// wholeParams name the branches of a whole read (each {id, since} with since -1: every
// record of the branch).
type wholeParams struct {
	AccountID string           `param:"accountId"`
	Branches  []map[string]any `param:"branches"`
}

// wholeRow is a row of a whole read's statement: records of one kind.
type wholeRow struct {
	Kind    string `col:"kind"`
	Records []any  `col:"records"`
}

// wholeReads are the statements that read the records of a whole conversation at once: one
// per kind of record (the rare ones together), each planned on its own.
var wholeReads = []*query[wholeParams, wholeRow]{
	newQuery[wholeParams, wholeRow]("WholeMessages"), newQuery[wholeParams, wholeRow]("WholeCalls"),
	newQuery[wholeParams, wholeRow]("WholeArtifacts"), newQuery[wholeParams, wholeRow]("WholeMemories"),
	newQuery[wholeParams, wholeRow]("WholeRuns"),
}

// readWhole reads every record of the branches a head read listed (wholeReads, each a
// transaction of its own) into read. The copy holds each branch at the revision the head
// read: every record read after it was written at that revision or later, and one written
// meanwhile and read is read again by the next read since the head's revisions, which the
// copy keeps as it is.
func (s *Store) readWhole(ctx context.Context, accountID string, read *conversationRead) error {
	p := wholeParams{AccountID: accountID, Branches: make([]map[string]any, len(read.Branches))}
	for i, v := range read.Branches {
		p.Branches[i] = map[string]any{"id": asProps(v).str("id"), "since": int64(-1)}
	}
	rows := make([][]wholeRow, len(wholeReads))
	errs := make([]error, len(wholeReads))
	var wg sync.WaitGroup
	for i, q := range wholeReads {
		wg.Go(func() { rows[i], errs[i] = q.autoAll(ctx, s, neo4j.AccessModeRead, p) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, statement := range rows {
		for _, row := range statement {
			if list := read.kind(row.Kind); list != nil {
				for _, v := range row.Records {
					*list = append(*list, asProps(v))
				}
			}
		}
	}
	return nil
}

// kind is where the read keeps the records of a kind (nil for another kind).
func (read *conversationRead) kind(name string) *[]props {
	switch name {
	case "run":
		return &read.Runs
	case "message":
		return &read.Messages
	case "call":
		return &read.Calls
	case "artifact":
		return &read.Artifacts
	case "memory":
		return &read.Memories
	case "checkpoint":
		return &read.Checkpoints
	case "skills":
		return &read.Skills
	}
	return nil
}

// LineageSnapshot reads the candidates of an assembly: the assembler's copy of the
// conversation, brought up to date with one ConversationRecords read (or read in full when
// there is no copy, when a deletion happened since, or when opts.Fresh asks for it), and the
// lineage of the requested branch selected from it as of req.AsOf (lineage.Conversation's
// Select).
func (s *Store) LineageSnapshot(ctx context.Context, accountID string, req model.AssemblyRequest, opts model.SnapshotOptions) (model.Snapshot, error) {
	copy, read, err := s.turnCopyRead(accountID, req, opts)
	if copy == nil {
		copy, read, err = s.readCopy(ctx, accountID, req, opts)
	}
	if err != nil {
		return model.Snapshot{}, err
	}
	copy.RLock()
	defer copy.RUnlock()
	snap, shared, err := buildSnapshot(copy, &read, forksOf(read.Branches), req, opts)
	if shared {
		s.records.CountShared()
	}
	return snap, err
}

// turnCopyRead returns the copy and the head that the run's turn began with (its first
// statement's read, beginTurn or ClaimRunStep), when this is the run's first assembly, of its
// participant, on the copy the cache still holds; nil otherwise.
func (s *Store) turnCopyRead(accountID string, req model.AssemblyRequest, opts model.SnapshotOptions) (*lineage.Conversation, conversationRead, error) {
	t, _ := s.turnReads.take(req.RunID)
	if t == nil || opts.Fresh || t.read.P.str("id") != req.ParticipantID {
		return nil, conversationRead{}, nil
	}
	if copy, _ := s.records.Lookup(accountID, req.BranchID); copy != t.copy {
		return nil, conversationRead{}, nil
	}
	return t.copy, t.read, nil
}

// readCopy brings the copy of the conversation up to date with one ConversationRecords read,
// or reads it in full (no copy, a deletion since, or opts.Fresh), and returns it with the
// read.
func (s *Store) readCopy(ctx context.Context, accountID string, req model.AssemblyRequest, opts model.SnapshotOptions) (*lineage.Conversation, conversationRead, error) {
	var copy *lineage.Conversation
	release := func() {}
	defer func() { release() }()
	for !opts.Fresh && s.records != nil {
		c, err := s.cachedCopy(ctx, accountID, req.BranchID)
		if err != nil {
			return nil, conversationRead{}, err
		}
		if c != nil {
			copy = c
			break
		}
		// No copy: read the conversation in full, unless another request is doing so;
		// then wait for it and take its copy.
		lead, done, err := s.records.FirstRead(ctx, accountID+"/"+req.BranchID)
		if err != nil {
			return nil, conversationRead{}, translate(err)
		}
		if lead {
			release = done
			break
		}
	}
	since, resetRev := map[string]int64{}, int64(0)
	if copy != nil {
		since, resetRev = copy.Since()
	}
	read, err := s.readConversation(ctx, accountID, req, since)
	if err != nil {
		return nil, conversationRead{}, err
	}
	if copy == nil || copy.ID() != read.ConversationID || read.ResetRev != resetRev {
		if len(since) > 0 {
			if read, err = s.readConversation(ctx, accountID, req, map[string]int64{}); err != nil {
				return nil, conversationRead{}, err
			}
		}
		copy = lineage.NewConversation(read.ConversationID, read.ResetRev)
	}
	s.merge(accountID, copy, &read, !opts.Fresh)
	return copy, read, nil
}

// merge brings a copy up to date with a read of the conversation's changes since it (or
// of all of it); keep stores the copy in the cache.
func (s *Store) merge(accountID string, copy *lineage.Conversation, read *conversationRead, keep bool) {
	branches := forksOf(read.Branches)
	copy.Lock()
	for _, r := range read.Runs {
		copy.MergeRun(runRecordOf(r))
	}
	records := make([]*lineage.Record, 0, len(read.Messages)+len(read.Calls)+len(read.Artifacts)+len(read.Memories)+
		len(read.Checkpoints)+len(read.Skills))
	for _, kind := range [...]struct {
		name    model.RecordType
		records []props
	}{{model.TypeMessage, read.Messages}, {model.TypeToolCall, read.Calls}, {model.TypeArtifact, read.Artifacts},
		{model.TypeMemory, read.Memories}, {model.TypeCheckpoint, read.Checkpoints}, {model.TypeSkills, read.Skills}} {
		for _, r := range kind.records {
			records = append(records, newRecord(kind.name, r))
		}
	}
	copy.Merge(records...)
	for i, v := range read.Branches {
		copy.Advance(branches[i].ID, asProps(v).i64("rev"))
	}
	copy.Unlock()
	participants := make([]model.Participant, len(read.Participants))
	for i, v := range read.Participants {
		participants[i] = participantOf(asProps(v))
	}
	copy.KnowParticipants(participants)
	if keep {
		s.records.Store(accountID, branches, copy)
	}
}

// turnCopy is the assembler's copy of a conversation as a turn's first statement found it
// (nil when there was none), with its count of deletions then.
type turnCopy struct {
	copy     *lineage.Conversation
	resetRev int64
}

// turnCopy returns the copy of a branch's conversation for a turn's first statement to bring
// up to date, and the revisions it holds as that statement's $since (nil when there is no
// copy: the statement then reads the head only).
func (s *Store) turnCopy(accountID, branchID string) (tc turnCopy, since any) {
	if c, _ := s.records.Lookup(accountID, branchID); c != nil {
		tc.copy = c
		since, tc.resetRev = c.Since()
	}
	return tc, since
}

// keep brings the copy up to date with what the statement read (rows: ConversationRecords'
// since the revisions the copy held), once it committed, and keeps the head for the first
// assembly of the run. A copy whose conversation was deleted from since is left as it is.
func (tc turnCopy) keep(s *Store, accountID, runID string, rows []recordRow) {
	if tc.copy == nil {
		return
	}
	read, found := gather(rows)
	if !found || tc.copy.ID() != read.ConversationID || read.ResetRev != tc.resetRev {
		return
	}
	s.records.CountRead(false)
	s.merge(accountID, tc.copy, &read, true)
	read.Messages, read.Calls, read.Artifacts, read.Memories, read.Checkpoints, read.Skills, read.Runs = nil, nil, nil, nil, nil, nil, nil
	s.turnReads.put(runID, &turnRead{copy: tc.copy, read: read})
}

// turnRead is the read a turn's first statement made for its run's first assembly
// (beginTurn, ClaimRunStep): the copy it brought up to date, and the head it read.
type turnRead struct {
	copy *lineage.Conversation
	read conversationRead
}

// maxTurnReads bounds the turn reads kept for assemblies that have not come: a run whose
// turn failed before its assembly leaves its read behind.
const maxTurnReads = 256

// forksOf reads the conversation's branches as ConversationRecords lists them ({id,
// parentId, afterSeq, rev}).
func forksOf(branches []any) []lineage.Fork {
	out := make([]lineage.Fork, len(branches))
	for i, v := range branches {
		b := asProps(v)
		out[i] = lineage.Fork{ID: b.str("id"), ParentID: b.str("parentId"), AfterSeq: b.i64("afterSeq")}
	}
	return out
}

// runRecordOf reads a run as ConversationRecords lists them.
func runRecordOf(p props) lineage.Run {
	return lineage.Run{ID: p.str("id"), Rev: p.i64("rev"), ParentRunID: p.str("parentRunId"), Status: p.str("status"),
		EndedAt: p.timePtr("endedAt"), EndRecordedAt: p.timePtr("endRecordedAt")}
}

// cachedCopy returns the copy of the conversation a branch belongs to, or nil.
func (s *Store) cachedCopy(ctx context.Context, accountID, branchID string) (*lineage.Conversation, error) {
	if copy, known := s.records.Lookup(accountID, branchID); known {
		return copy, nil
	}
	// A branch forked since the conversation was last read: find its conversation.
	row, err := readTx(ctx, s, func(t *tx) (conversationIDRow, error) {
		row, _, err := branchConversation.one(t, branchParams{AccountID: accountID, BranchID: branchID})
		return row, err
	})
	if err != nil {
		return nil, err
	}
	return s.records.LookupConversation(accountID, row.ConversationID), nil
}

// buildSnapshot reads the participant and run of the request and the conversation's
// participants from a ConversationRecords answer, and selects the lineage of req.BranchID
// from the conversation copy as of req.AsOf. shared reports that the candidates were a view
// built before. The caller holds c's RLock.
func buildSnapshot(c *lineage.Conversation, read *conversationRead, branches []lineage.Fork, req model.AssemblyRequest, opts model.SnapshotOptions) (snap model.Snapshot, shared bool, err error) {
	snap = model.Snapshot{ConversationID: c.ID()}
	p := read.P
	if p.str("conversationId") != snap.ConversationID {
		e := model.NotFound("participant", req.ParticipantID)
		e.Field = "participantId"
		return model.Snapshot{}, false, e
	}
	snap.Participant = participantOf(p)
	// The instructions in force at asOf, the conversation's first (DESIGN §8).
	for _, in := range []struct {
		typ      model.RecordType
		ref      string
		versions props
	}{{model.TypeConversation, snap.ConversationID, read.Instructions}, {model.TypeParticipant, req.ParticipantID, p}} {
		text := lineage.InstructionsAsOf(in.versions.strs("instructionsTexts"), in.versions.times("instructionsAts"), req.AsOf)
		if text != "" {
			snap.Instructions = append(snap.Instructions, model.Instructions{Ref: in.ref, Type: in.typ, Text: text})
		}
	}
	snap.ParticipantNames = map[string]string{}
	for _, v := range read.Participants {
		pt := asProps(v)
		snap.ParticipantNames[pt.str("id")] = pt.str("name")
	}
	if req.RunID != "" {
		r := read.Run
		if r.str("conversationId") != snap.ConversationID {
			e := model.NotFound("run", req.RunID)
			e.Field = "runId"
			return model.Snapshot{}, false, e
		}
		run := runOf(r)
		// The run is one of the conversation's, merged into the copy with its end.
		run.Status, run.EndedAt = c.RunAsOf(req.RunID, req.AsOf)
		snap.Run = &run
	}
	lin := lineage.Of(c.ID(), req.BranchID, branches)
	if shared, err = c.Select(lin, req, opts, snap.ParticipantNames, &snap); err != nil {
		return model.Snapshot{}, false, err
	}
	return snap, shared, nil
}

// baseCandidate builds the part of a record's candidate that depends on the record alone:
// not its depth in a lineage, nor run status, promotion or a call's outcome, which depend on
// the lineage and the snapshot time.
func baseCandidate(kind model.RecordType, p props) model.Candidate {
	c := model.Candidate{ID: p.str("id"), BranchID: p.str("branchId"), Seq: p.i64("seq"), InLineage: true,
		CreatedAt: p.time("createdAt")}
	switch kind {
	case model.TypeMessage:
		c.Type, c.Visibility = model.TypeMessage, model.Visibility(p.str("visibility"))
		c.OwnerParticipantID, c.OwnerRunID = p.str("participantId"), p.str("runId")
		c.Message = model.MessageFacts{Role: p.str("role"), Content: p.str("content")}
		if c.Message.Role == "user" {
			c.Message.Stated = extract.StatedValues(c.Message.Content, extract.MaxStatedValues)
		}
	case model.TypeToolCall:
		c.Type, c.OwnerRunID, c.OwnerParticipantID = model.TypeToolCall, p.str("runId"), p.str("participantId")
		c.Tool = model.ToolFacts{Name: p.str("tool"), Status: model.ToolPending}
		c.Call = model.CallFacts{CallID: p.str("callId"), Arguments: p.str("arguments"), ArgumentsRef: p.str("argumentsRef"),
			RetryOf: p.str("retryOf")}
		// A call with no outcome yet has no artifact to carry its visibility: it is the
		// requesting participant's own state.
		c.Visibility = model.VisibilityParticipant
	case model.TypeArtifact:
		c.Type = model.TypeArtifact
		c.Tool = model.ToolFacts{Name: p.str("tool"), Status: model.ToolStatus(p.str("status")),
			ErrorCode: p.str("errorCode"), ErrorMessage: p.str("errorMessage")}
		c.Artifact = model.ArtifactFacts{ToolCallID: p.str("toolCallId"), ResultBytes: p.i64("resultBytes"), ArgsBytes: p.i64("argsBytes"),
			Redacted: p.boolean("redacted")}
		ownership(&c, p)
	case model.TypeMemory:
		c.Type = model.TypeMemory
		c.Memory = model.MemoryFacts{Report: p.str("kind") == model.MemoryKindReport, Summary: p.str("summary"),
			SafeSummary: p.str("safeSummary"), Data: p.str("data"), Confidence: p.float("confidence"),
			FreshnessClass: p.str("freshnessClass"), ObservedAt: p.time("observedAt"), StaleAfter: p.timePtr("staleAfter"),
			RevalidateWith: p.strs("revalidateWith"), SourceArtifactIDs: p.strs("sourceArtifactIds"), LiveSourceIDs: p.strs("liveSources"),
			RedactedSourceIDs: p.strs("redactedSources"),
			QuotesWhole:       p.boolean("quotesWhole")}
		ownership(&c, p)
	case model.TypeCheckpoint:
		c.Type, c.RunState = model.TypeCheckpoint, model.RunStateFacts{RunID: p.str("runId"), State: p.str("state")}
	case model.TypeSkills:
		c.Type, c.RunState = model.TypeSkills, model.RunStateFacts{RunID: p.str("runId"), LoadedSkills: p.strs("loadedSkills"),
			ActiveProfiles: p.strs("activeProfiles"), DirectTools: p.strs("directTools")}
	}
	return c
}

// ownership fills the fields every tool-derived record carries.
func ownership(c *model.Candidate, p props) {
	c.Visibility = model.Visibility(p.str("visibility"))
	c.OwnerParticipantID = p.str("ownerParticipantId")
	c.OwnerRunID = p.str("ownerRunId")
	c.SharedWith = p.strs("sharedWith")
	c.PrivacyClass = p.str("privacyClass")
}
