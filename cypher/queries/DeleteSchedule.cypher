// name: DeleteSchedule
// Deletes a schedule; a claim waiting for its lock finds nothing and fires nothing. The
// ticks it fired stay with the runs they STARTED until the conversation is deleted.
MATCH (s:Schedule {id: $id, accountId: $accountId})
WITH s, s.conversationId AS conversationId
DETACH DELETE s
RETURN conversationId
