// name: SentRequest
// The exact request body an assembly's model call sent to its provider, with its sha256,
// and what the store keeps of the assembly's record (the body goes with a trimmed record).
// No row when the assembly is not the account's or its conversation was deleted.
MATCH (a:ContextAssembly {id: $id, accountId: $accountId})
WHERE EXISTS { MATCH (cv:Conversation {id: a.conversationId, accountId: $accountId}) WHERE cv.deletedAt IS NULL }
RETURN a {.requestBody, .requestSha256, .recordState, .recordTrimmed, .recordTrimmedAt, .keepPerBranch, .policyVersion} AS a
