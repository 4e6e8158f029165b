// name: PromoteToParent
// Shares a child run's artifacts and memories with its parent run's participant and marks
// them promoted.
MATCH (child:ModelRun {id: $runId, accountId: $accountId})-[:CHILD_OF]->(parent:ModelRun)
CALL (child, parent) {
  UNWIND $artifactIds AS artifactId
  MATCH (a:ToolArtifact {id: artifactId, accountId: $accountId, ownerRunId: child.id})
  SET a.promoted = true, a.promotedToRunId = parent.id,
      a.sharedWithParticipants = CASE WHEN parent.participantId IN a.sharedWithParticipants
                                      THEN a.sharedWithParticipants
                                      ELSE a.sharedWithParticipants + parent.participantId END
}
CALL (child, parent) {
  UNWIND $memoryIds AS memoryId
  MATCH (m:ToolMemory {id: memoryId, accountId: $accountId, ownerRunId: child.id})
  SET m.promoted = true, m.promotedToRunId = parent.id,
      m.sharedWithParticipants = CASE WHEN parent.participantId IN m.sharedWithParticipants
                                      THEN m.sharedWithParticipants
                                      ELSE m.sharedWithParticipants + parent.participantId END
}
RETURN parent
