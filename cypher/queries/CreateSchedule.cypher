// name: CreateSchedule
// Writes a schedule on a branch of its conversation:
// (Conversation)-[:HAS_SCHEDULE]->(Schedule)-[:ON_BRANCH]->(Branch). The conversation is
// locked before the branch, the order every writer takes them in (MarkConversationDeleted).
// Returns nothing when the conversation is unknown or deleted, or the branch is not its.
MATCH (c:Conversation {id: $conversationId, accountId: $accountId})
WHERE c.deletedAt IS NULL
MATCH (b:Branch {id: $branchId, accountId: $accountId})
WHERE b.conversationId = c.id
CREATE (s:Schedule {id: $id, accountId: $accountId, conversationId: c.id, branchId: b.id,
                    participantIds: $participantIds, cron: $cron, timezone: $timezone, prompt: $prompt,
                    policyVersion: $policyVersion, tokenBudget: $tokenBudget, tools: $tools,
                    enabled: $enabled, nextRunAt: $nextRunAt, lastRunIds: [],
                    createdAt: $createdAt, recordedAt: $recordedAt})
CREATE (c)-[:HAS_SCHEDULE]->(s)
CREATE (s)-[:ON_BRANCH]->(b)
RETURN s
