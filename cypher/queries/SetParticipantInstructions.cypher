// name: SetParticipantInstructions
// Replaces a participant's instructions. A text that differs from the current one is
// appended to its versions (instructionsTexts, with instructionsAts: when each was recorded),
// so that an assembly made before the change is replayed with the text it used.
// The conversation is write-locked before its deletion mark is checked, as every writer of
// a conversation locks it first (MarkConversationDeleted).
MATCH (p:Participant {id: $id, accountId: $accountId})
MATCH (c:Conversation {id: p.conversationId, accountId: $accountId})
SET c._lock = true REMOVE c._lock
WITH c, p WHERE c.deletedAt IS NULL
WITH p, coalesce(p.instructions, '') <> $instructions AS changed
SET p.instructions = $instructions,
    p.instructionsTexts = CASE WHEN changed THEN coalesce(p.instructionsTexts, []) + $instructions ELSE p.instructionsTexts END,
    p.instructionsAts = CASE WHEN changed THEN coalesce(p.instructionsAts, []) + $recordedAt ELSE p.instructionsAts END
RETURN p
