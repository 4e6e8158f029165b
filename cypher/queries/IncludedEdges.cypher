// name: IncludedEdges
// The INCLUDED edges of a recorded assembly, in the order it serialised their records, as a
// reader of the graph in Neo4j Browser finds them.
MATCH (a:ContextAssembly {id: $id, accountId: $accountId})-[i:INCLUDED]->(n)
RETURN n.id AS ref, i.as AS as, i.position AS position
ORDER BY position
