// name: RunModelCalls
// The model calls of a run of the account, oldest first: each assembly FOR_RUN it, with its
// policy version, tokens, the sha256 of the request body its call sent (null when none was
// sent) and what the store keeps of its record. No row when the run is not the account's or
// its conversation was deleted.
MATCH (r:ModelRun {id: $id, accountId: $accountId})
WHERE EXISTS { MATCH (cv:Conversation {id: r.conversationId, accountId: $accountId}) WHERE cv.deletedAt IS NULL }
OPTIONAL MATCH (a:ContextAssembly)-[:FOR_RUN]->(r)
WHERE a.accountId = $accountId
WITH r, a ORDER BY a.createdAt, a.id
RETURN r.id AS runId,
       collect(a {.id, .createdAt, .policyVersion, .requestSha256, .assembledTokens, .baselineTokens, .tokenBudget,
                  .recordState, hasRequest: a.requestBody IS NOT NULL}) AS calls
