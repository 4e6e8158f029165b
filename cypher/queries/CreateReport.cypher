// name: CreateReport
// The report of a promotion: a memory of kind promoted_report owned by the parent run, at
// the parent's branch's next seq, derived from the promoted artifacts, with the privacy
// class and safe summary the promotion gave it.
MATCH (parent:ModelRun {id: $parentRunId, accountId: $accountId})
MATCH (b:Branch {id: parent.branchId, accountId: $accountId})
SET b.seq = b.seq + 1, b.rev = b.rev + 1
WITH parent, b, b.seq AS seq, b.rev AS rev
CREATE (m:ToolMemory {id: $id, accountId: $accountId, conversationId: parent.conversationId, branchId: b.id, seq: seq,
                      kind: 'promoted_report', summary: $summary, safeSummary: $safeSummary, privacyClass: $privacyClass,
                      freshnessClass: 'durable', observedAt: $createdAt, revalidateWith: [], provenanceLocators: [],
                      sourceArtifactIds: $artifactIds, provenanceBroken: false, resolutionStatus: 'resolved',
                      repairAttempts: 0, visibility: 'participant', sharedWithParticipants: [],
                      ownerParticipantId: parent.participantId, ownerRunId: parent.id, promoted: true,
                      promotedFromRunId: $childRunId, rev: rev, createdAt: $createdAt, recordedAt: $recordedAt})
WITH m
CALL (m) {
  UNWIND $artifactIds AS artifactId
  MATCH (a:ToolArtifact {id: artifactId, accountId: $accountId})
  CREATE (m)-[:DERIVED_FROM]->(a)
}
RETURN m
