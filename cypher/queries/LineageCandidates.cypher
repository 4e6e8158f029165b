// name: LineageCandidates
// The one traversal of an assembly: the active branch and its ancestors (each up to its fork
// point), and on them every record recorded by $asOf, with what the policies need to judge
// it and never a raw payload body (arguments only of unresolved calls and of the assembly
// run's own calls; message content only of the latest $contentTail messages and of system
// messages). A failed call is resolved by a later retry: one naming it in retryOf, or an
// identical repeat in the same run. Tool call status, run status and promotion are read as
// of $asOf from the immutable records that carry them. Also: conversation-visible memories
// of other branches, the baseline token sum of naive replay, and how many records of the
// conversation lie outside the lineage.
MATCH path = (b:Branch {id: $branchId, accountId: $accountId})-[:FORKED_FROM*0..]->(a:Branch)
WITH b, a, length(path) AS depth,
     CASE length(path) WHEN 0 THEN $openEnded ELSE last(relationships(path)).afterSeq END AS cutoff
WITH b, collect({branchId: a.id, depth: depth, cutoff: cutoff}) AS lineage
CALL (lineage) {
  UNWIND lineage AS l
  MATCH (m:Message {branchId: l.branchId})
  WHERE m.seq <= l.cutoff AND m.accountId = $accountId AND m.recordedAt <= $asOf
  WITH l, m ORDER BY l.depth DESC, m.seq
  RETURN collect(m {.id, .branchId, .seq, .role, .participantId, .runId, .visibility, .createdAt,
                    depth: l.depth}) AS messages,
         sum(coalesce(m.baselineTokens, 0)) AS messageTokens
}
CALL (messages) {
  UNWIND [x IN messages WHERE x.role = 'system'] + messages[-$contentTail..] AS x
  WITH DISTINCT x.id AS id
  MATCH (m:Message {id: id})
  OPTIONAL MATCH (p:Participant {id: m.participantId})
  RETURN collect({id: id, content: m.content, participantName: p.name}) AS messageContent
}
CALL (lineage) {
  // A call's outcome is its latest artifact in the lineage (see artifacts below); its
  // arguments are read only when it may be unresolved as of $asOf on this lineage: its
  // current status is open, or it was resolved after the fork point or after $asOf.
  UNWIND lineage AS l
  MATCH (t:ToolCall {branchId: l.branchId})
  WHERE t.seq <= l.cutoff AND t.accountId = $accountId AND t.recordedAt <= $asOf
  WITH l, t ORDER BY l.depth DESC, t.seq
  RETURN collect(t {.id, .branchId, .seq, .tool, .callId, .retryOf, .createdAt, .argumentsRef, .runId,
                    .participantId, .argumentsSha256, depth: l.depth,
                    arguments: CASE WHEN t.status IN ['pending', 'deferred', 'failed'] OR t.runId = $runId
                                      OR t.resolvedSeq > l.cutoff OR t.resolvedRecordedAt > $asOf
                                    THEN t.arguments END}) AS calls,
         sum(coalesce(t.baselineTokens, 0)) AS callTokens
}
CALL (calls) {
  // Only calls that may be open need their retries: one naming the call in retryOf, or an
  // identical repeat (same tool, byte-identical arguments) later in the same run.
  UNWIND [c IN calls WHERE c.arguments IS NOT NULL OR c.argumentsRef IS NOT NULL] AS c
  CALL (c) {
    MATCH (retry:ToolCall {retryOf: c.id})
    WHERE retry.accountId = $accountId AND retry.recordedAt <= $asOf
    RETURN retry
    UNION
    MATCH (:ModelRun {id: c.runId})-[:REQUESTED]->(retry:ToolCall {tool: c.tool, argumentsSha256: c.argumentsSha256})
    WHERE retry.seq > c.seq AND retry.recordedAt <= $asOf
    RETURN retry
  }
  RETURN collect({of: c.id, id: retry.id, branchId: retry.branchId, seq: retry.seq}) AS retries
}
CALL (lineage) {
  UNWIND lineage AS l
  MATCH (a:ToolArtifact {branchId: l.branchId})
  WHERE a.seq <= l.cutoff AND a.accountId = $accountId AND a.recordedAt <= $asOf
  WITH l, a ORDER BY l.depth DESC, a.seq
  RETURN collect(a {.id, .branchId, .seq, .toolCallId, .tool, .status, .privacyClass, .visibility,
                    .ownerParticipantId, .ownerRunId, .resultBytes, .argsBytes, .createdAt, .errorCode,
                    .errorMessage, .retryable, depth: l.depth, sharedWith: a.sharedWithParticipants,
                    promoted: coalesce(a.promotedAt <= $asOf, false), promotedTo: a.promotedToParticipantId}) AS artifacts,
         sum(coalesce(a.baselineTokens, 0)) AS artifactTokens
}
CALL (b, lineage) {
  CALL (b, lineage) {
    UNWIND lineage AS l
    MATCH (m:ToolMemory {branchId: l.branchId})
    WHERE m.seq <= l.cutoff AND m.accountId = $accountId AND m.recordedAt <= $asOf
    RETURN m, l.depth AS depth
    UNION ALL
    MATCH (m:ToolMemory {conversationId: b.conversationId, visibility: 'conversation'})
    WHERE m.accountId = $accountId AND m.recordedAt <= $asOf
      AND NOT any(l IN lineage WHERE l.branchId = m.branchId AND m.seq <= l.cutoff)
    RETURN m, -1 AS depth
  }
  WITH m, depth ORDER BY depth DESC, m.seq
  RETURN collect(m {.id, .branchId, .seq, .kind, .summary, .safeSummary, .data, .confidence, .privacyClass,
                    .freshnessClass, .observedAt, .staleAfter, .revalidateWith, .sourceArtifactIds, .visibility,
                    .ownerParticipantId, .ownerRunId, .createdAt, depth: depth, inLineage: depth >= 0,
                    sharedWith: m.sharedWithParticipants,
                    promoted: coalesce(m.promotedAt <= $asOf, false), promotedTo: m.promotedToParticipantId,
                    liveSources: [(m)-[:DERIVED_FROM]->(x:ToolArtifact) WHERE x.recordedAt <= $asOf | x.id],
                    supersededBy: [(n:ToolMemory)-[:SUPERSEDES]->(m) WHERE n.recordedAt <= $asOf | n.id],
                    conflictsWith: [(m)-[:CONFLICTS_WITH]-(o:ToolMemory) WHERE o.recordedAt <= $asOf | o.id]}) AS memories
}
CALL (calls, artifacts, memories) {
  // Every run that owns a record, once: parent and status as of $asOf.
  UNWIND [c IN calls | c.runId] + [a IN artifacts | a.ownerRunId] + [m IN memories | m.ownerRunId] AS runId
  WITH DISTINCT runId WHERE runId IS NOT NULL
  MATCH (r:ModelRun {id: runId})
  RETURN collect({id: r.id, parentRunId: r.parentRunId,
                  status: CASE WHEN r.endRecordedAt <= $asOf THEN r.status ELSE 'running' END,
                  endedAt: CASE WHEN r.endRecordedAt <= $asOf THEN r.endedAt END}) AS runs
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
RETURN b.conversationId AS conversationId, lineage, messages, messageContent, messageTokens, calls, retries,
       callTokens, artifacts, runs,
       artifactTokens, memories, checkpoints, skills, excluded, participants, p, run
