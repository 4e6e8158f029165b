// name: RecordCheckpoint
// Records a checkpoint of a run; RESTORES links it to the assembly it resumes from.
MATCH (r:ModelRun {id: $runId, accountId: $accountId})
MATCH (b:Branch {id: r.branchId, accountId: $accountId})
SET b.seq = b.seq + 1
WITH r, b, b.seq AS seq
CREATE (c:Checkpoint {id: $id, accountId: $accountId, conversationId: r.conversationId, branchId: b.id, seq: seq,
                      runId: r.id, state: $state, assemblyId: $assemblyId,
                      createdAt: $createdAt, recordedAt: $recordedAt})
CREATE (r)-[:CHECKPOINTED]->(c)
WITH c
CALL (c) {
  MATCH (a:ContextAssembly {id: $assemblyId, accountId: $accountId})
  CREATE (c)-[:RESTORES]->(a)
}
RETURN c
