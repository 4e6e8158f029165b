// name: ReadParticipant
// A participant of a conversation that is not being deleted.
MATCH (p:Participant {id: $id, accountId: $accountId})
WHERE EXISTS { MATCH (cv:Conversation {id: p.conversationId}) WHERE cv.deletedAt IS NULL }
RETURN p
