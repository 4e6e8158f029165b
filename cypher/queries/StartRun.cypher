// name: StartRun
// Starts a run of a participant at the branch's next seq, linked to the message that
// triggered it and, for a subagent, to its parent run, with the tools and tool choice the
// generation path offers its model calls (a JSON text; none when $tools is null) and, for a
// run a server serves, that server's lease ($leaseUntil and $leaseHolder, null otherwise).
MATCH (b:Branch {id: $branchId, accountId: $accountId})
MATCH (p:Participant {id: $participantId, accountId: $accountId})
SET b.seq = b.seq + 1, b.rev = b.rev + 1
WITH b, p, b.seq AS seq, b.rev AS rev
CREATE (r:ModelRun {id: $id, accountId: $accountId, conversationId: b.conversationId, branchId: b.id, seq: seq,
                    participantId: p.id, runtimeKind: $runtimeKind, status: 'running',
                    provider: coalesce($provider, p.provider), model: coalesce($model, p.model),
                    triggerMessageId: $triggerMessageId, parentRunId: $parentRunId,
                    tools: $tools, toolChoice: $toolChoice, leaseUntil: $leaseUntil, leaseHolder: $leaseHolder,
                    startedAt: $createdAt, rev: rev, createdAt: $createdAt, recordedAt: $recordedAt})
CREATE (r)-[:ON_BRANCH]->(b)
CREATE (r)-[:BY]->(p)
WITH r
CALL (r) {
  MATCH (m:Message {id: $triggerMessageId, accountId: $accountId})
  CREATE (r)-[:TRIGGERED_BY]->(m)
}
CALL (r) {
  MATCH (parent:ModelRun {id: $parentRunId, accountId: $accountId})
  CREATE (r)-[:CHILD_OF]->(parent)
}
RETURN r
