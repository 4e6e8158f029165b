// name: BranchNameTaken
// Whether a conversation already has a branch of this name. Run by ForkBranch in its write
// transaction: the conversation is locked before its branches are read, so that a fork of
// the same name being written in another transaction (its HAS_BRANCH edge locks the
// conversation too) commits first and is seen; setting a property takes the node's write
// lock, and removing it again in the same statement leaves nothing.
MATCH (c:Conversation {id: $conversationId, accountId: $accountId})
SET c._lock = true REMOVE c._lock
WITH c
MATCH (c)-[:HAS_BRANCH]->(b:Branch {name: $name})
RETURN b.id AS id
LIMIT 1
