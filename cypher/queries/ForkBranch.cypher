// name: ForkBranch
// Forks a branch after a message. The FORKED_FROM edge points at the branch that holds the
// message (the parent itself, or the ancestor the parent inherited it from), with afterSeq =
// the message's seq, so the fork inherits exactly what the parent saw up to that message.
MATCH (c:Conversation {id: $conversationId, accountId: $accountId})
SET c._lock = true REMOVE c._lock
WITH c
MATCH (c)-[:HAS_BRANCH]->(a:Branch {id: $holderBranchId})
SET a._lock = true REMOVE a._lock
WITH c, a
MATCH (a)-[:HAS_MESSAGE]->(m:Message {id: $forkAfterMessageId})
CREATE (b:Branch {id: $id, accountId: $accountId, conversationId: c.id, name: $name, seq: 0, rev: 0,
                  createdAt: $createdAt, recordedAt: $recordedAt})
CREATE (c)-[:HAS_BRANCH]->(b)
CREATE (b)-[:FORKED_FROM {afterSeq: m.seq, afterMessageId: m.id}]->(a)
RETURN b, a.id AS parentBranchId, m.seq AS afterSeq
