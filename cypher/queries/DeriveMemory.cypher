// name: DeriveMemory
// Creates a memory at its branch's next seq, DERIVED_FROM its source artifacts (with their
// locators), SUPERSEDES the memories it replaces and CONFLICTS_WITH those it contradicts.
MATCH (b:Branch {id: $branchId, accountId: $accountId})
SET b.seq = b.seq + 1, b.rev = b.rev + 1
WITH b, b.seq AS seq, b.rev AS rev
CREATE (m:ToolMemory {id: $id, accountId: $accountId, conversationId: b.conversationId, branchId: b.id, seq: seq,
                      kind: $kind, summary: $summary, data: $data, safeSummary: $safeSummary,
                      confidence: $confidence, confidenceSource: $confidenceSource, rationale: $rationale,
                      limitations: $limitations, privacyClass: $privacyClass, freshnessClass: $freshnessClass,
                      observedAt: $observedAt, staleAfter: $staleAfter, revalidateWith: $revalidateWith,
                      provenanceLocators: $provenanceLocators, sourceArtifactIds: $sourceArtifactIds,
                      provenanceBroken: false, resolutionStatus: 'unresolved', repairAttempts: 0,
                      promotionPolicy: $promotionPolicy, visibility: $visibility,
                      sharedWithParticipants: $sharedWithParticipants, ownerParticipantId: $ownerParticipantId,
                      ownerRunId: $ownerRunId, promoted: false, promotedFromRunId: $promotedFromRunId,
                      rev: rev, createdAt: $createdAt, recordedAt: $recordedAt})
WITH m
CALL (m) {
  UNWIND $sources AS src
  MATCH (a:ToolArtifact {id: src.id, accountId: $accountId})
  CREATE (m)-[:DERIVED_FROM {locator: src.locator}]->(a)
}
CALL (m) {
  UNWIND $supersedes AS oldId
  MATCH (old:ToolMemory {id: oldId, accountId: $accountId})
  CREATE (m)-[:SUPERSEDES]->(old)
}
CALL (m) {
  UNWIND $conflictsWith AS otherId
  MATCH (other:ToolMemory {id: otherId, accountId: $accountId})
  CREATE (m)-[:CONFLICTS_WITH]->(other)
}
RETURN m
