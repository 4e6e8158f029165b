// name: PromoteToParent
// Marks a child run's artifacts and memories promoted to its parent run: from promotedAt on,
// the parent's participant may see them. Their own visibility and sharing stay as recorded,
// so an assembly as of an earlier time still sees them unpromoted.
MATCH (child:ModelRun {id: $runId, accountId: $accountId})-[:CHILD_OF]->(parent:ModelRun)
MATCH (b:Branch {id: child.branchId})
SET b.rev = b.rev + 1
WITH child, parent, b.rev AS rev
CALL (child, parent, rev) {
  UNWIND $artifactIds AS artifactId
  MATCH (a:ToolArtifact {id: artifactId, accountId: $accountId, ownerRunId: child.id})
  SET a.promoted = true, a.promotedToRunId = parent.id, a.promotedToParticipantId = parent.participantId,
      a.promotedAt = $recordedAt, a.rev = rev
}
CALL (child, parent, rev) {
  UNWIND $memoryIds AS memoryId
  MATCH (m:ToolMemory {id: memoryId, accountId: $accountId, ownerRunId: child.id})
  SET m.promoted = true, m.promotedToRunId = parent.id, m.promotedToParticipantId = parent.participantId,
      m.promotedAt = $recordedAt, m.rev = rev
}
RETURN parent
