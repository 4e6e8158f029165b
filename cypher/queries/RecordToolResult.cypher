// name: RecordToolResult
// Captures outcomes of one account's tool calls, one for each row of $rows (groupCommit in
// batch.go writes the results of concurrent requests together): each as a new artifact at
// the branch's next seq, updating the call's status. The artifact inherits owner, run and
// runtime kind from the run, and the skills the run had loaded. Returns the row's index and
// the artifact's id (not the node: its result can be tens of KB) for each row written; a row
// whose call is not the account's or already has a final outcome (an earlier row's
// included) writes nothing and returns no record. A row may carry the memory the runtime
// derived from its result (DESIGN §7), written in the same statement; its id is returned in
// memoryIds. Rows are written in the order of their branches' ids, so that concurrent
// batches lock the branches they share in the same order instead of deadlocking.
UNWIND $rows AS row
OPTIONAL MATCH (o:ToolCall {id: row.toolCallId, accountId: $accountId})
WITH row ORDER BY o.branchId, row.i
CALL (row) {
  MATCH (t:ToolCall {id: row.toolCallId, accountId: $accountId})
  MATCH (b:Branch {id: t.branchId, accountId: $accountId})
  // The branch is locked before the call's status is read, so that a result being written
  // for the call in another transaction commits first and is seen (reads are read-committed
  // and take no lock; setting a property takes the node's write lock, and removing it again
  // in the same statement leaves nothing).
  SET b._lock = true REMOVE b._lock
  WITH row, t, b
  WHERE t.status IN ['pending', 'deferred']
  MATCH (r:ModelRun)-[:REQUESTED]->(t)
  SET b.seq = b.seq + 1, b.rev = b.rev + 1
  WITH t, r, b, b.seq AS seq, b.rev AS rev
  CALL (r) {
    OPTIONAL MATCH (r)-[:HAD_SKILLS]->(s:SkillState)
    WITH s ORDER BY s.seq DESC
    RETURN head(collect(s.loadedSkills)) AS activeSkills
  }
  SET t.status = row.status, t.retryable = row.retryable, t.errorCode = row.errorCode, t.errorMessage = row.errorMessage,
      t.resolvedAt = row.createdAt, t.resolvedSeq = seq, t.resolvedRecordedAt = row.recordedAt, t.rev = rev
  CREATE (a:ToolArtifact {id: row.id, accountId: $accountId, conversationId: t.conversationId, branchId: b.id, seq: seq,
                          toolCallId: t.id, tool: t.tool, status: row.status, errorCode: row.errorCode, errorMessage: row.errorMessage,
                          args: t.arguments, argsRef: t.argumentsRef, argsSha256: t.argumentsSha256, argsBytes: t.argumentsBytes,
                          result: row.result, resultRef: row.resultRef, resultSha256: row.resultSha256, resultBytes: row.resultBytes,
                          baselineTokens: row.baselineTokens, retryable: row.retryable,
                          privacyClass: row.privacyClass, visibility: row.visibility, sharedWithParticipants: row.sharedWithParticipants,
                          ownerParticipantId: r.participantId, ownerRunId: r.id, runtimeKind: r.runtimeKind,
                          toolVersion: row.toolVersion, activeSkills: coalesce(activeSkills, []), promoted: false,
                          retentionClass: row.retentionClass, retentionAfter: row.retentionAfter,
                          retentionSource: row.retentionSource, retainUntil: row.retainUntil,
                          rev: rev, createdAt: row.createdAt, recordedAt: row.recordedAt})
  CREATE (t)-[:PRODUCED]->(a)
  // The memory the runtime derived from the result (row.memory, when there is one) comes
  // next on the branch: the artifact's owner, run, privacy, visibility and sharing,
  // DERIVED_FROM it with the locator of every value it quotes.
  WITH t, a, b, row
  CALL (a, b, row) {
    UNWIND CASE WHEN row.memory IS NULL THEN [] ELSE [row.memory] END AS d
    SET b.seq = b.seq + 1, b.rev = b.rev + 1
    WITH a, b, d, b.seq AS mseq, b.rev AS mrev
    CREATE (m:ToolMemory {id: d.id, accountId: $accountId, conversationId: a.conversationId, branchId: b.id, seq: mseq,
                          kind: 'tool', summary: d.summary, data: null, safeSummary: d.safeSummary,
                          confidence: d.confidence, confidenceSource: d.confidenceSource, rationale: null,
                          limitations: d.limitations, privacyClass: a.privacyClass, freshnessClass: d.freshnessClass,
                          observedAt: a.createdAt, staleAfter: d.staleAfter, revalidateWith: d.revalidateWith,
                          provenanceLocators: [l IN d.locators | a.id + '#' + l], sourceArtifactIds: [a.id],
                          provenanceBroken: false, resolutionStatus: 'unresolved', repairAttempts: 0,
                          promotionPolicy: d.promotionPolicy, quotesWhole: d.quotesWhole, visibility: a.visibility,
                          sharedWithParticipants: a.sharedWithParticipants, ownerParticipantId: a.ownerParticipantId,
                          ownerRunId: a.ownerRunId, promoted: false, promotedFromRunId: null,
                          rev: mrev, createdAt: a.createdAt, recordedAt: a.recordedAt})
    CREATE (m)-[:DERIVED_FROM {locator: head(d.locators), locators: d.locators}]->(a)
    RETURN collect(m.id) AS memoryIds
  }
  RETURN a.id AS id, a.conversationId AS conversationId, memoryIds
}
RETURN row.i AS i, id, conversationId, memoryIds
