// name: ToolCallArtifactIds
// The artifacts a tool call produced, oldest first.
MATCH (t:ToolCall {id: $id, accountId: $accountId})-[:PRODUCED]->(a:ToolArtifact)
WITH a ORDER BY a.seq
RETURN collect(a.id) AS ids
