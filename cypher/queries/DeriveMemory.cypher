// name: DeriveMemory
// Creates a memory at its branch's next seq, DERIVED_FROM its source artifacts (with their
// locators: the first, and every value's of a derived memory), SUPERSEDES the memories it replaces
// (those it names, and those the runtime derived from its sources) and CONFLICTS_WITH those it contradicts.
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
                      promotionPolicy: $promotionPolicy, quotesWhole: $quotesWhole, visibility: $visibility,
                      sharedWithParticipants: $sharedWithParticipants, ownerParticipantId: $ownerParticipantId,
                      ownerRunId: $ownerRunId, promoted: false, promotedFromRunId: $promotedFromRunId,
                      rev: rev, createdAt: $createdAt, recordedAt: $recordedAt})
WITH m
CALL (m) {
  UNWIND $sources AS src
  MATCH (a:ToolArtifact {id: src.id, accountId: $accountId})
  CREATE (m)-[:DERIVED_FROM {locator: src.locator, locators: src.locators}]->(a)
}
CALL (m) {
  UNWIND $supersedes AS oldId
  MATCH (old:ToolMemory {id: oldId, accountId: $accountId})
  CREATE (m)-[:SUPERSEDES]->(old)
}
// A memory the runtime derived from these sources alone is replaced by this one when its
// promotionPolicy is one of $supersedeDerived (none when this memory is structural too),
// unless the request names it already or another memory replaced it before.
CALL (m) {
  UNWIND $sources AS src
  MATCH (derived:ToolMemory {accountId: $accountId})-[:DERIVED_FROM]->(:ToolArtifact {id: src.id, accountId: $accountId})
  WHERE derived.promotionPolicy IN $supersedeDerived AND NOT derived.id IN $supersedes AND derived <> m
    AND all(s IN derived.sourceArtifactIds WHERE s IN [x IN $sources | x.id])
    AND NOT EXISTS { (:ToolMemory)-[:SUPERSEDES]->(derived) }
  WITH DISTINCT derived
  CREATE (m)-[:SUPERSEDES]->(derived)
}
CALL (m) {
  UNWIND $conflictsWith AS otherId
  MATCH (other:ToolMemory {id: otherId, accountId: $accountId})
  CREATE (m)-[:CONFLICTS_WITH]->(other)
}
RETURN m
