// name: EraseArtifact
// Erases an artifact and everything derived only from it (POST /v1/artifacts/{id}/erase,
// DESIGN §10): the artifact with its body (the blob references returned in refs), the
// memories and reports derived only from it (a memory with other sources stays, marked
// provenance-broken), the stored idempotent responses that carry any of them, and the
// records of the assemblies that included the body raw (trimmed to their counts,
// recordTrimmed $trimmedAs: 'erased_artifact', or 'deleted_artifact' when the retention
// sweep deletes an artifact whose delete_after ran out), with their stored responses). With
// $dryRun it writes
// nothing and answers what would go. A deletion cannot be stamped: the conversation's
// resetRev tells every assembler's copy to read it again. No row when the artifact is not
// the account's.
MATCH (a:ToolArtifact {id: $id, accountId: $accountId})
MATCH (cv:Conversation {id: a.conversationId, accountId: $accountId})
WHERE cv.deletedAt IS NULL
CALL (a) {
  OPTIONAL MATCH (m:ToolMemory)-[:DERIVED_FROM]->(a)
  WHERE NOT EXISTS { MATCH (m)-[:DERIVED_FROM]->(other:ToolArtifact) WHERE other <> a }
  RETURN collect(m) AS only
}
CALL (a) {
  OPTIONAL MATCH (x:ContextAssembly)-[i:INCLUDED]->(a)
  WHERE i.as = 'raw' AND x.accountId = $accountId AND x.recordState <> 'trimmed'
  RETURN collect(DISTINCT x) AS raw
}
CALL (a) {
  OPTIONAL MATCH (k:IdempotencyKey {artifactId: a.id})
  WHERE k.accountId = $accountId AND k.state <> 'erased'
  RETURN collect(k) AS byArtifact
}
CALL (only, raw) {
  UNWIND [n IN only | n.id] + [x IN raw | x.id] AS record
  MATCH (k:IdempotencyKey {recordId: record})
  WHERE k.accountId = $accountId AND k.state <> 'erased'
  RETURN collect(k) AS byRecord
}
WITH a, cv, only, raw, byArtifact + byRecord AS keys
WITH a, cv, only, raw, keys, [r IN [a.argsRef, a.resultRef] WHERE r IS NOT NULL] AS refs,
     [n IN only | n.id] AS memoryIds, [x IN raw | x.id] AS assemblyIds, [(m:ToolMemory)-[:DERIVED_FROM]->(a) | m.id] AS derived
CALL (a, cv, only, raw, keys) {
  WITH a, cv, only, raw, keys WHERE NOT $dryRun
  SET cv.resetRev = coalesce(cv.resetRev, 0) + 1
  FOREACH (x IN raw |
    SET x.recordState = 'trimmed', x.recordTrimmed = $trimmedAs, x.recordTrimmedAt = $now
    REMOVE x.record, x.requestBody)
  WITH a, only, raw, keys
  CALL (raw) {
    UNWIND raw AS x
    MATCH (x)-[e:INCLUDED|OMITTED]->()
    DELETE e
  }
  CALL (raw) {
    UNWIND raw AS x
    MATCH (:PolicyDecision)-[e:CONSTRAINS]->(x)
    DELETE e
  }
  FOREACH (k IN keys | SET k.state = 'erased', k.erasedAt = $now REMOVE k.body)
  WITH a, only
  CALL (a) {
    MATCH (m:ToolMemory)-[:DERIVED_FROM]->(a)
    SET m.provenanceBroken = true
  }
  FOREACH (m IN only | DETACH DELETE m)
  DETACH DELETE a
}
RETURN refs, memoryIds, [id IN derived WHERE NOT id IN memoryIds] AS brokenMemoryIds, assemblyIds, size(keys) AS responses
