// part: ConversationChanges
// What the assembler reads of a conversation cv (included where a statement has it bound,
// by a line `// include: ConversationChanges`, and followed by the statement's RETURN of
// kind and record among what it carries): on every branch whose revision is above the one
// in $since (a map from branch id to revision; a branch missing from it is read in full;
// none when $since is null), the records written or changed since, each with what the
// policies need to judge it (and its element id, by which RecordAssembly links it) and
// never a raw artifact body. One row per record (kind, record), and one row of kind "head":
// the conversation's branches with their fork points, seq counters and revisions, the count
// of its deletions (resetRev), its participants, the versions of the conversation's
// instructions, and the requesting participant ($participantId, with the versions of its
// instructions) and run ($runId).
CALL (cv) {
  MATCH (x:Branch {conversationId: cv.id})
  OPTIONAL MATCH (x)-[f:FORKED_FROM]->(parent:Branch)
  RETURN collect({id: x.id, seq: x.seq, rev: x.rev, parentId: parent.id, afterSeq: f.afterSeq}) AS branches
}
WITH *, [x IN branches WHERE $since IS NOT NULL AND x.rev > coalesce($since[x.id], -1) | {id: x.id, since: coalesce($since[x.id], -1)}] AS changed
CALL (cv, branches, changed) {
  OPTIONAL MATCH (p:Participant {id: $participantId, accountId: $accountId})
  OPTIONAL MATCH (run:ModelRun {id: $runId, accountId: $accountId})
  RETURN 'head' AS kind, {conversationId: cv.id, resetRev: cv.resetRev, instructions: cv {.instructionsTexts, .instructionsAts},
         branches: branches, p: p, run: run,
         participants: COLLECT { MATCH (cv)-[:HAS_PARTICIPANT]->(pt:Participant) RETURN pt {.id, .kind, .name, .provider, .model} }} AS record
  UNION ALL
  UNWIND changed AS x
  MATCH (r:ModelRun {branchId: x.id}) WHERE r.rev > x.since
  RETURN 'run' AS kind, r {.id, .rev, .parentRunId, .status, .endedAt, .endRecordedAt} AS record
  UNION ALL
  UNWIND changed AS x
  MATCH (m:Message {branchId: x.id}) WHERE m.rev > x.since
  RETURN 'message' AS kind, m {.id, eid: elementId(m), .branchId, .seq, .rev, .role, .participantId, .runId, .visibility, .createdAt,
                               .recordedAt, .content, .baselineTokens} AS record
  UNION ALL
  UNWIND changed AS x
  MATCH (t:ToolCall {branchId: x.id}) WHERE t.rev > x.since
  RETURN 'call' AS kind, t {.id, eid: elementId(t), .branchId, .seq, .rev, .tool, .callId, .retryOf, .createdAt, .recordedAt, .arguments,
                            .argumentsRef, .argumentsSha256, .runId, .participantId, .baselineTokens} AS record
  UNION ALL
  UNWIND changed AS x
  MATCH (a:ToolArtifact {branchId: x.id}) WHERE a.rev > x.since
  RETURN 'artifact' AS kind, a {.id, eid: elementId(a), .branchId, .seq, .rev, .toolCallId, .tool, .status, .privacyClass, .visibility,
                                .ownerParticipantId, .ownerRunId, .resultBytes, .argsBytes, .createdAt, .recordedAt,
                                .errorCode, .errorMessage, .retryable, .promotedAt, .baselineTokens,
                                redacted: a.redactedAt IS NOT NULL,
                                sharedWith: a.sharedWithParticipants, promotedTo: a.promotedToParticipantId} AS record
  UNION ALL
  UNWIND changed AS x
  MATCH (m:ToolMemory {branchId: x.id}) WHERE m.rev > x.since
  RETURN 'memory' AS kind, m {.id, eid: elementId(m), .branchId, .seq, .rev, .kind, .summary, .safeSummary, .data, .confidence, .privacyClass,
                              .freshnessClass, .observedAt, .staleAfter, .revalidateWith, .sourceArtifactIds, .visibility,
                              .ownerParticipantId, .ownerRunId, .createdAt, .recordedAt, .promotedAt, .quotesWhole,
                              sharedWith: m.sharedWithParticipants, promotedTo: m.promotedToParticipantId,
                              liveSources: [(m)-[:DERIVED_FROM]->(src:ToolArtifact) | src.id],
                              redactedSources: [(m)-[:DERIVED_FROM]->(src:ToolArtifact) WHERE src.redactedAt IS NOT NULL | src.id],
                              supersedes: [(m)-[:SUPERSEDES]->(o:ToolMemory) | o.id],
                              conflictsWith: [(m)-[:CONFLICTS_WITH]-(o:ToolMemory) | o.id]} AS record
  UNION ALL
  UNWIND changed AS x
  MATCH (c:Checkpoint {branchId: x.id}) WHERE c.rev > x.since
  RETURN 'checkpoint' AS kind, c {.id, eid: elementId(c), .branchId, .seq, .rev, .runId, .state, .createdAt, .recordedAt} AS record
  UNION ALL
  UNWIND changed AS x
  MATCH (s:SkillState {branchId: x.id}) WHERE s.rev > x.since
  RETURN 'skills' AS kind, s {.id, eid: elementId(s), .branchId, .seq, .rev, .runId, .loadedSkills, .activeProfiles, .directTools, .createdAt,
                              .recordedAt} AS record
}
