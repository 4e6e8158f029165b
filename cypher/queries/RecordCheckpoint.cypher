// name: RecordCheckpoint
// Records a checkpoint of a run; RESTORES links it to the assembly it resumes from.
MATCH (r:ModelRun {id: $runId, accountId: $accountId})
MATCH (b:Branch {id: r.branchId, accountId: $accountId})
SET b.seq = b.seq + 1, b.rev = b.rev + 1
WITH r, b, b.seq AS seq, b.rev AS rev
CREATE (c:Checkpoint {id: $id, accountId: $accountId, conversationId: r.conversationId, branchId: b.id, seq: seq,
                      runId: r.id, state: $state, assemblyId: $assemblyId,
                      rev: rev, createdAt: $createdAt, recordedAt: $recordedAt})
CREATE (r)-[:CHECKPOINTED]->(c)
WITH c
CALL (c) {
  MATCH (a:ContextAssembly {id: $assemblyId, accountId: $accountId})
  CREATE (c)-[:RESTORES]->(a)
}
RETURN c
