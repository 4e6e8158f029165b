// name: ReadAssembly
// A recorded assembly with its policy decisions.
MATCH (a:ContextAssembly {id: $id, accountId: $accountId})
RETURN a, [(d:PolicyDecision)-[:CONSTRAINS]->(a) |
           d {.refs, .kind, .outcome, .as, .reason, .rule}] AS decisions
