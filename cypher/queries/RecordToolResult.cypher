// name: RecordToolResult
// Captures a tool call's outcome as a new artifact at the branch's next seq and updates the
// call's status. The artifact inherits owner, run and runtime kind from the run, and the
// skills the run had loaded. Returns the artifact's id (not the node: its result can be
// tens of KB), or nothing when the call already has a final outcome.
MATCH (t:ToolCall {id: $toolCallId, accountId: $accountId})
WHERE t.status IN ['pending', 'deferred']
MATCH (r:ModelRun)-[:REQUESTED]->(t)
MATCH (b:Branch {id: t.branchId, accountId: $accountId})
SET b.seq = b.seq + 1, b.rev = b.rev + 1
WITH t, r, b, b.seq AS seq, b.rev AS rev
CALL (r) {
  OPTIONAL MATCH (r)-[:HAD_SKILLS]->(s:SkillState)
  WITH s ORDER BY s.seq DESC
  RETURN head(collect(s.loadedSkills)) AS activeSkills
}
SET t.status = $status, t.retryable = $retryable, t.errorCode = $errorCode, t.errorMessage = $errorMessage,
    t.resolvedAt = $createdAt, t.resolvedSeq = seq, t.resolvedRecordedAt = $recordedAt, t.rev = rev
CREATE (a:ToolArtifact {id: $id, accountId: $accountId, conversationId: t.conversationId, branchId: b.id, seq: seq,
                        toolCallId: t.id, tool: t.tool, status: $status, errorCode: $errorCode, errorMessage: $errorMessage,
                        args: t.arguments, argsRef: t.argumentsRef, argsSha256: t.argumentsSha256, argsBytes: t.argumentsBytes,
                        result: $result, resultRef: $resultRef, resultSha256: $resultSha256, resultBytes: $resultBytes,
                        baselineTokens: $baselineTokens, retryable: $retryable,
                        privacyClass: $privacyClass, visibility: $visibility, sharedWithParticipants: $sharedWithParticipants,
                        ownerParticipantId: r.participantId, ownerRunId: r.id, runtimeKind: r.runtimeKind,
                        toolVersion: $toolVersion, activeSkills: coalesce(activeSkills, []), promoted: false,
                        rev: rev, createdAt: $createdAt, recordedAt: $recordedAt})
CREATE (t)-[:PRODUCED]->(a)
RETURN a.id AS id
