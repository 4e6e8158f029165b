// name: RequestToolCall
// Records tool calls requested by runs of one account, one for each row of $rows
// (groupCommit in batch.go writes the calls of concurrent requests together), each at its
// run's branch's next seq. Returns the row's index and the call for each row written; a row
// whose run is not the account's, or already has a call with the row's callId (found by the tool_call_run_call
// index, and seeing the calls of earlier rows), writes nothing and returns no record. Rows
// are written in the order of their branches' ids, so that concurrent batches lock the
// branches they share in the same order instead of deadlocking.
UNWIND $rows AS row
OPTIONAL MATCH (o:ModelRun {id: row.runId, accountId: $accountId})
WITH row ORDER BY o.branchId, row.i
CALL (row) {
  MATCH (r:ModelRun {id: row.runId, accountId: $accountId})
  MATCH (b:Branch {id: r.branchId, accountId: $accountId})
  // The branch is locked before the run's calls are looked up, so that a call with the same
  // callId being written in another transaction commits first and is seen (as in
  // RecordToolResult).
  SET b._lock = true REMOVE b._lock
  WITH row, r, b
  WHERE NOT EXISTS { MATCH (:ToolCall {runId: r.id, callId: row.callId}) }
  SET b.seq = b.seq + 1, b.rev = b.rev + 1
  WITH r, b, b.seq AS seq, b.rev AS rev
  CREATE (t:ToolCall {id: row.id, accountId: $accountId, conversationId: r.conversationId, branchId: b.id, seq: seq,
                      runId: r.id, participantId: r.participantId, callId: row.callId, tool: row.tool,
                      arguments: row.arguments, argumentsRef: row.argumentsRef, argumentsSha256: row.argumentsSha256,
                      argumentsBytes: row.argumentsBytes, baselineTokens: row.baselineTokens, status: 'pending', retryable: false, retryOf: row.retryOf,
                      freshnessClass: row.freshnessClass, staleAfter: row.staleAfter, revalidateWith: row.revalidateWith,
                      retentionClass: row.retentionClass, retentionAfter: row.retentionAfter,
                      rev: rev, createdAt: row.createdAt, recordedAt: row.recordedAt})
  CREATE (r)-[:REQUESTED]->(t)
  RETURN t
}
RETURN row.i AS i, t
