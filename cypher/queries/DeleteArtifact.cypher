// name: DeleteArtifact
// Deletes an artifact; the memories derived from it stay, marked provenance-broken. Returns
// the blob references it held.
MATCH (a:ToolArtifact {id: $id, accountId: $accountId})
// A deletion cannot be followed by stamping revisions: resetRev tells cached copies of the
// conversation to read it again.
MATCH (cv:Conversation {id: a.conversationId})
WHERE cv.deletedAt IS NULL
SET cv.resetRev = coalesce(cv.resetRev, 0) + 1
WITH a
CALL (a) {
  OPTIONAL MATCH (m:ToolMemory)-[:DERIVED_FROM]->(a)
  SET m.provenanceBroken = true
  RETURN count(m) AS brokenMemories
}
// The stored idempotent response of the tool result that created the artifact names it:
// a replay of that request answers 404 from now on.
CALL (a) {
  MATCH (k:IdempotencyKey {artifactId: a.id})
  SET k.state = 'erased', k.erasedAt = $recordedAt
  REMOVE k.body
}
WITH a, [r IN [a.argsRef, a.resultRef] WHERE r IS NOT NULL] AS refs, brokenMemories
DETACH DELETE a
RETURN refs, brokenMemories
