// part: HeadRecord
// The head of what the assembler reads of the conversation cv (included where cv and its
// branches are bound): a row ('head', record) of the conversation's branches, the count of
// its deletions (resetRev), its participants, the versions of its instructions, and the
// requesting participant ($participantId, with the versions of its instructions) and run
// ($runId).
OPTIONAL MATCH (p:Participant {id: $participantId, accountId: $accountId})
OPTIONAL MATCH (run:ModelRun {id: $runId, accountId: $accountId})
RETURN 'head' AS kind, {conversationId: cv.id, resetRev: cv.resetRev, instructions: cv {.instructionsTexts, .instructionsAts},
       branches: branches, p: p, run: run,
       participants: COLLECT { MATCH (cv)-[:HAS_PARTICIPANT]->(pt:Participant) RETURN pt {.id, .kind, .name, .provider, .model} }} AS record
