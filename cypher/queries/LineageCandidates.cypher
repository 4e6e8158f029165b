// name: LineageCandidates
// The one traversal of an assembly: the active branch and its ancestors (each up to its fork
// point), and on them every record recorded by $asOf, with what the policies need to judge
// it and never a raw payload body (arguments only of unresolved calls and of the assembly
// run's own calls). A failed call is resolved by a later retry: one naming it in retryOf,
// or an identical repeat in the same run. Tool call status, run status and promotion are read as of $asOf from
// the immutable records that carry them. Also: conversation-visible memories of other
// branches, the baseline token sum of naive replay, and how many records of the
// conversation lie outside the lineage.
MATCH path = (b:Branch {id: $branchId, accountId: $accountId})-[:FORKED_FROM*0..]->(a:Branch)
WITH b, a, length(path) AS depth,
     CASE length(path) WHEN 0 THEN $openEnded ELSE last(relationships(path)).afterSeq END AS cutoff
WITH b, collect({branchId: a.id, depth: depth, cutoff: cutoff}) AS lineage
CALL (lineage) {
  UNWIND lineage AS l
  MATCH (m:Message {branchId: l.branchId})
  WHERE m.seq <= l.cutoff AND m.accountId = $accountId AND m.recordedAt <= $asOf
  OPTIONAL MATCH (p:Participant {id: m.participantId})
  WITH l, m, p ORDER BY l.depth DESC, m.seq
  RETURN collect(m {.id, .branchId, .seq, .role, .content, .participantId, .runId, .visibility, .createdAt,
                    depth: l.depth, participantName: p.name}) AS messages,
         sum(coalesce(m.baselineTokens, 0)) AS messageTokens
}
CALL (lineage) {
  UNWIND lineage AS l
  MATCH (t:ToolCall {branchId: l.branchId})
  WHERE t.seq <= l.cutoff AND t.accountId = $accountId AND t.recordedAt <= $asOf
  MATCH (r:ModelRun {id: t.runId})
  CALL (t) {
    OPTIONAL MATCH (t)-[:PRODUCED]->(art:ToolArtifact)
    WHERE art.recordedAt <= $asOf
    WITH art ORDER BY art.seq DESC
    RETURN collect(art.id) AS artifactIds, head(collect(art)) AS last
  }
  CALL (t, r) {
    // A retry names the failed call (retryOf), or repeats it exactly: a later call of the
    // same run with the same tool and byte-identical arguments.
    OPTIONAL MATCH (retry:ToolCall {retryOf: t.id})
    WHERE retry.accountId = $accountId AND retry.recordedAt <= $asOf
    RETURN {id: retry.id, branchId: retry.branchId, seq: retry.seq} AS retry
    UNION
    OPTIONAL MATCH (r)-[:REQUESTED]->(retry:ToolCall {tool: t.tool, argumentsSha256: t.argumentsSha256})
    WHERE retry.seq > t.seq AND retry.recordedAt <= $asOf
    RETURN {id: retry.id, branchId: retry.branchId, seq: retry.seq} AS retry
  }
  WITH l, t, r, artifactIds, last, collect(retry) AS retries
  WITH l, t, r, artifactIds, last, retries, coalesce(last.status, 'pending') AS status
  ORDER BY l.depth DESC, t.seq
  RETURN collect(t {.id, .branchId, .seq, .tool, .callId, .retryOf, .createdAt, .argumentsRef,
                    depth: l.depth, status: status,
                    arguments: CASE WHEN status IN ['pending', 'deferred', 'failed'] OR t.runId = $runId
                                    THEN t.arguments END,
                    errorCode: last.errorCode, errorMessage: last.errorMessage,
                    retryable: coalesce(last.retryable, false), runId: r.id, ownerParticipantId: r.participantId,
                    runParentId: r.parentRunId,
                    runStatus: CASE WHEN r.endRecordedAt <= $asOf THEN r.status ELSE 'running' END,
                    visibility: last.visibility, privacyClass: last.privacyClass,
                    sharedWith: last.sharedWithParticipants,
                    promoted: coalesce(last.promotedAt <= $asOf, false), promotedTo: last.promotedToParticipantId,
                    artifactIds: artifactIds, retries: retries}) AS calls,
         sum(coalesce(t.baselineTokens, 0)) AS callTokens
}
CALL (lineage) {
  UNWIND lineage AS l
  MATCH (a:ToolArtifact {branchId: l.branchId})
  WHERE a.seq <= l.cutoff AND a.accountId = $accountId AND a.recordedAt <= $asOf
  MATCH (r:ModelRun {id: a.ownerRunId})
  WITH l, a, r ORDER BY l.depth DESC, a.seq
  RETURN collect(a {.id, .branchId, .seq, .toolCallId, .tool, .status, .privacyClass, .visibility,
                    .ownerParticipantId, .ownerRunId, .resultBytes, .argsBytes, .createdAt, .errorCode,
                    .errorMessage, depth: l.depth, sharedWith: a.sharedWithParticipants,
                    promoted: coalesce(a.promotedAt <= $asOf, false), promotedTo: a.promotedToParticipantId,
                    runParentId: r.parentRunId,
                    runStatus: CASE WHEN r.endRecordedAt <= $asOf THEN r.status ELSE 'running' END}) AS artifacts,
         sum(coalesce(a.baselineTokens, 0)) AS artifactTokens
}
CALL (b, lineage) {
  MATCH (m:ToolMemory {conversationId: b.conversationId})
  WHERE m.accountId = $accountId AND m.recordedAt <= $asOf
  WITH m, [l IN lineage WHERE l.branchId = m.branchId AND m.seq <= l.cutoff][0] AS l
  WITH m, l WHERE l IS NOT NULL OR m.visibility = 'conversation'
  OPTIONAL MATCH (r:ModelRun {id: m.ownerRunId})
  WITH m, l, r ORDER BY coalesce(l.depth, -1) DESC, m.seq
  RETURN collect(m {.id, .branchId, .seq, .kind, .summary, .safeSummary, .data, .confidence, .privacyClass,
                    .freshnessClass, .observedAt, .staleAfter, .revalidateWith, .sourceArtifactIds, .visibility,
                    .ownerParticipantId, .ownerRunId, .createdAt, depth: coalesce(l.depth, -1), inLineage: l IS NOT NULL,
                    sharedWith: m.sharedWithParticipants,
                    promoted: coalesce(m.promotedAt <= $asOf, false), promotedTo: m.promotedToParticipantId,
                    runParentId: r.parentRunId,
                    runStatus: CASE WHEN r.endRecordedAt <= $asOf THEN r.status ELSE 'running' END,
                    runEndedAt: CASE WHEN r.endRecordedAt <= $asOf THEN r.endedAt END,
                    liveSources: [(m)-[:DERIVED_FROM]->(x:ToolArtifact) WHERE x.recordedAt <= $asOf | x.id],
                    sourceCalls: [(m)-[:DERIVED_FROM]->(:ToolArtifact)<-[:PRODUCED]-(c:ToolCall) | c.id],
                    supersededBy: [(n:ToolMemory)-[:SUPERSEDES]->(m) WHERE n.recordedAt <= $asOf | n.id],
                    conflictsWith: [(m)-[:CONFLICTS_WITH]-(o:ToolMemory) WHERE o.recordedAt <= $asOf | o.id]}) AS memories
}
CALL (lineage) {
  UNWIND lineage AS l
  MATCH (c:Checkpoint {branchId: l.branchId})
  WHERE c.seq <= l.cutoff AND c.accountId = $accountId AND c.recordedAt <= $asOf
  WITH l, c ORDER BY l.depth DESC, c.seq
  RETURN collect(c {.id, .branchId, .seq, .runId, .state, .createdAt, depth: l.depth}) AS checkpoints
}
CALL (lineage) {
  UNWIND lineage AS l
  MATCH (s:SkillState {branchId: l.branchId})
  WHERE s.seq <= l.cutoff AND s.accountId = $accountId AND s.recordedAt <= $asOf
  WITH l, s ORDER BY l.depth DESC, s.seq
  RETURN collect(s {.id, .branchId, .seq, .runId, .loadedSkills, .activeProfiles, .directTools, .createdAt,
                    depth: l.depth}) AS skills
}
CALL (b, lineage) {
  MATCH (:Conversation {id: b.conversationId})-[:HAS_BRANCH]->(x:Branch)
  WITH x, [l IN lineage WHERE l.branchId = x.id][0] AS l
  RETURN sum(CASE WHEN l IS NULL THEN x.seq WHEN x.seq > l.cutoff THEN x.seq - l.cutoff ELSE 0 END) AS excluded
}
CALL (b) {
  MATCH (:Conversation {id: b.conversationId})-[:HAS_PARTICIPANT]->(pt:Participant)
  RETURN collect(pt {.id, .name}) AS participants
}
OPTIONAL MATCH (p:Participant {id: $participantId, accountId: $accountId})
OPTIONAL MATCH (run:ModelRun {id: $runId, accountId: $accountId})
RETURN b.conversationId AS conversationId, lineage, messages, messageTokens, calls, callTokens, artifacts,
       artifactTokens, memories, checkpoints, skills, excluded, participants, p, run
