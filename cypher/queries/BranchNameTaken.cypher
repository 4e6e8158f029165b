// name: BranchNameTaken
// Whether a conversation already has a branch of this name.
MATCH (c:Conversation {id: $conversationId, accountId: $accountId})-[:HAS_BRANCH]->(b:Branch {name: $name})
RETURN b.id AS id
LIMIT 1
