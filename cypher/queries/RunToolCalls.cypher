// name: RunToolCalls
// The calls a run of the account requested, in the order they were requested, each with
// the ids of its outcomes.
MATCH (r:ModelRun {id: $runId, accountId: $accountId})-[:REQUESTED]->(t:ToolCall)
OPTIONAL MATCH (t)-[:PRODUCED]->(a:ToolArtifact)
WITH t, a ORDER BY a.seq
WITH t, collect(a.id) AS artifactIds
RETURN t, artifactIds
ORDER BY t.seq
