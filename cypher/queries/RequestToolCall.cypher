// name: RequestToolCall
// Records a tool call requested by a run, at the run's branch's next seq; returns nothing
// when the run already has a call with this callId (found by the tool_call_run_call index).
MATCH (r:ModelRun {id: $runId, accountId: $accountId})
WHERE NOT EXISTS { MATCH (:ToolCall {runId: r.id, callId: $callId}) }
MATCH (b:Branch {id: r.branchId, accountId: $accountId})
SET b.seq = b.seq + 1, b.rev = b.rev + 1
WITH r, b, b.seq AS seq, b.rev AS rev
CREATE (t:ToolCall {id: $id, accountId: $accountId, conversationId: r.conversationId, branchId: b.id, seq: seq,
                    runId: r.id, participantId: r.participantId, callId: $callId, tool: $tool,
                    arguments: $arguments, argumentsRef: $argumentsRef, argumentsSha256: $argumentsSha256,
                    argumentsBytes: $argumentsBytes, baselineTokens: $baselineTokens, status: 'pending', retryable: false, retryOf: $retryOf,
                    rev: rev, createdAt: $createdAt, recordedAt: $recordedAt})
CREATE (r)-[:REQUESTED]->(t)
RETURN t
