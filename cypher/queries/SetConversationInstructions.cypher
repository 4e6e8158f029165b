// name: SetConversationInstructions
// Replaces a conversation's instructions, keeping each version with when it was recorded as
// SetParticipantInstructions does.
MATCH (c:Conversation {id: $id, accountId: $accountId})
SET c._lock = true REMOVE c._lock
WITH c WHERE c.deletedAt IS NULL
WITH c, coalesce(c.instructions, '') <> $instructions AS changed
SET c.instructions = $instructions,
    c.instructionsTexts = CASE WHEN changed THEN coalesce(c.instructionsTexts, []) + $instructions ELSE c.instructionsTexts END,
    c.instructionsAts = CASE WHEN changed THEN coalesce(c.instructionsAts, []) + $recordedAt ELSE c.instructionsAts END
RETURN c
