// name: ReadMemory
// A memory with its live provenance and its supersession and conflict links, read in both
// directions (each link is one edge).
MATCH (m:ToolMemory {id: $id, accountId: $accountId})
WHERE EXISTS { MATCH (cv:Conversation {id: m.conversationId}) WHERE cv.deletedAt IS NULL }
RETURN m,
       [(m)-[:DERIVED_FROM]->(a:ToolArtifact) | a.id] AS liveSources,
       [(m)-[:SUPERSEDES]->(old:ToolMemory) | old.id] AS supersedes,
       [(newer:ToolMemory)-[:SUPERSEDES]->(m) | newer.id] AS supersededBy,
       [(m)-[:CONFLICTS_WITH]-(other:ToolMemory) | other.id] AS conflictsWith
