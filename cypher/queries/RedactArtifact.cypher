// name: RedactArtifact
// Redacts an artifact whose retention ran out (redact_after, DESIGN §10): its result body
// goes (inline, or the blob reference returned in refs for removal); its id, hashes, sizes,
// tool and arguments stay, and so do its memories, whose provenance path then shows it
// redacted. The artifact and its memories are stamped with their branches' next revisions,
// so that every assembler's copy reads the change. The records of assemblies that included
// the body raw are trimmed (recordTrimmed 'redacted_artifact'), and the stored responses
// that carried them erased: nothing of the body comes back through a replay. Returns the
// trimmed assemblies' ids; no row when the artifact is not due (already done, or not the
// account's).
MATCH (a:ToolArtifact {id: $id, accountId: $accountId})
WHERE a.redactedAt IS NULL AND a.retainUntil <= $now
MATCH (b:Branch {id: a.branchId, accountId: $accountId})
SET b.rev = b.rev + 1
SET a.rev = b.rev, a.redactedAt = $now
WITH a, [r IN [a.resultRef] WHERE r IS NOT NULL] AS refs
REMOVE a.result, a.resultRef, a.retainUntil
WITH a, refs
CALL (a) {
  MATCH (m:ToolMemory)-[:DERIVED_FROM]->(a)
  MATCH (mb:Branch {id: m.branchId, accountId: $accountId})
  SET mb.rev = mb.rev + 1
  SET m.rev = mb.rev
}
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
  SET x.recordState = 'trimmed', x.recordTrimmed = 'redacted_artifact', x.recordTrimmedAt = $now
  REMOVE x.record, x.requestBody
  RETURN collect(x.id) AS trimmed
}
RETURN refs, trimmed
