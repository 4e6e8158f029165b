// name: DecisionEdges
// The stored policy decisions that CONSTRAIN a recorded assembly, one row per record a
// decision is ABOUT, as a reader of the graph in Neo4j Browser finds them.
MATCH (a:ContextAssembly {id: $id, accountId: $accountId})<-[:CONSTRAINS]-(d:PolicyDecision)-[:ABOUT]->(n)
RETURN n.id AS ref, d.kind AS kind, d.outcome AS outcome, d.as AS as, d.reason AS reason, d.rule AS rule
ORDER BY d.id, ref
