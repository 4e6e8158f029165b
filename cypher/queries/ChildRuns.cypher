// name: ChildRuns
// The runs CHILD_OF a run (its subagents), oldest first.
MATCH (:ModelRun {id: $runId, accountId: $accountId})<-[:CHILD_OF]-(c:ModelRun)
RETURN c
ORDER BY c.createdAt, c.id
