// name: ReadAssembly
// A recorded assembly with its policy decisions.
MATCH (a:ContextAssembly {id: $id, accountId: $accountId})
WHERE EXISTS { MATCH (cv:Conversation {id: a.conversationId}) WHERE cv.deletedAt IS NULL }
RETURN a, [(d:PolicyDecision)-[:CONSTRAINS]->(a) |
           d {.refs, .kind, .outcome, .as, .reason, .rule}] AS decisions
