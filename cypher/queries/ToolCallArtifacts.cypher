// name: ToolCallArtifacts
// The artifacts produced by the given tool calls of one run.
MATCH (r:ModelRun {id: $runId, accountId: $accountId})-[:REQUESTED]->(t:ToolCall)-[:PRODUCED]->(a:ToolArtifact)
WHERE t.id IN $toolCallIds
RETURN a.id AS id, a.privacyClass AS privacyClass
