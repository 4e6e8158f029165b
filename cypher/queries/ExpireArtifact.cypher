// name: ExpireArtifact
// Deletes an artifact whose retention ran out (delete_after, DESIGN §10): the artifact and
// its body (the blob references returned in refs for removal) go, with the memories derived
// only from it; a memory that has other sources stays, marked provenance-broken. The records
// of assemblies that included the body raw are trimmed (recordTrimmed 'deleted_artifact'),
// and the stored responses that carried them or named the artifact erased. A deletion cannot
// be stamped: the conversation's resetRev tells every assembler's copy to read it again.
// Returns the deleted memories' and the trimmed assemblies' ids; no row when the artifact is
// not due.
MATCH (a:ToolArtifact {id: $id, accountId: $accountId})
WHERE a.retainUntil <= $now
MATCH (cv:Conversation {id: a.conversationId, accountId: $accountId})
SET cv.resetRev = coalesce(cv.resetRev, 0) + 1
WITH a
CALL (a) {
  MATCH (x:ContextAssembly)-[i:INCLUDED]->(a)
  WHERE i.as = 'raw' AND x.accountId = $accountId AND x.recordState <> 'trimmed'
  WITH DISTINCT x
  CALL (x) {
    MATCH (x)-[e:INCLUDED|OMITTED]->()
    DELETE e
  }
  CALL (x) {
    MATCH (:PolicyDecision)-[e:CONSTRAINS]->(x)
    DELETE e
  }
  CALL (x) {
    MATCH (k:IdempotencyKey {recordId: x.id})
    SET k.state = 'erased', k.erasedAt = $now
    REMOVE k.body
  }
  SET x.recordState = 'trimmed', x.recordTrimmed = 'deleted_artifact', x.recordTrimmedAt = $now
  REMOVE x.record
  RETURN collect(x.id) AS trimmed
}
CALL (a) {
  MATCH (m:ToolMemory)-[:DERIVED_FROM]->(a)
  WHERE NOT EXISTS { MATCH (m)-[:DERIVED_FROM]->(other:ToolArtifact) WHERE other <> a }
  WITH m, m.id AS id
  DETACH DELETE m
  RETURN collect(id) AS deletedMemories
}
CALL (a) {
  MATCH (m:ToolMemory)-[:DERIVED_FROM]->(a)
  SET m.provenanceBroken = true
}
CALL (a) {
  MATCH (k:IdempotencyKey {artifactId: a.id})
  SET k.state = 'erased', k.erasedAt = $now
  REMOVE k.body
}
WITH a, [r IN [a.argsRef, a.resultRef] WHERE r IS NOT NULL] AS refs, trimmed, deletedMemories
DETACH DELETE a
RETURN refs, trimmed, deletedMemories
