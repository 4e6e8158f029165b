// name: MarkConversationDeleted
// The first step of deleting a conversation, in one transaction: mark it deleted (reads
// answer 404 from now on) and delete its branches and participants, so that no write can
// land in it while the rest is deleted in batches, and its schedules, so that none fires
// again. Returns nothing for an unknown conversation; a conversation already marked is
// marked again (its branches may be gone already), so an interrupted deletion is finished
// by deleting it again. The stored idempotent responses of the conversation's writes are
// erased: a replay answers 404, never the deleted content. Its drop-in key (clientKey) is
// given up, so that a client using the key again starts a new conversation.
// Locks are taken in the order every writer takes them: the conversation, then each branch
// (in id order), then each participant, and only then the records that deleting them
// detaches. A writer locks its branch (or the conversation) before anything else, so it
// either commits before the mark or waits for it and finds nothing, and never holds a record
// the mark needs while it waits for one the mark holds (a deadlock).
MATCH (c:Conversation {id: $id, accountId: $accountId})
SET c.deletedAt = coalesce(c.deletedAt, $recordedAt)
REMOVE c.clientKey
WITH c
CALL (c) {
  MATCH (n:Branch {conversationId: c.id})
  WITH n ORDER BY n.id
  SET n._lock = true REMOVE n._lock
}
CALL (c) {
  MATCH (n:Participant {conversationId: c.id})
  WITH n ORDER BY n.id
  SET n._lock = true REMOVE n._lock
}
CALL (c) {
  CALL (c) {
    MATCH (n:Branch {conversationId: c.id}) RETURN n
    UNION ALL MATCH (n:Participant {conversationId: c.id}) RETURN n
  }
  WITH collect(n) AS nodes
  FOREACH (n IN nodes | DETACH DELETE n)
  RETURN size(nodes) AS removed
}
CALL (c) {
  MATCH (s:Schedule {conversationId: c.id})
  DETACH DELETE s
}
CALL (c) {
  MATCH (k:IdempotencyKey {conversationId: c.id})
  SET k.state = 'erased', k.erasedAt = $recordedAt
  REMOVE k.body
}
RETURN c.id AS id
