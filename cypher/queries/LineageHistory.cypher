// name: LineageHistory
// The user-facing transcript of a lineage: messages, and tool calls as compact cards (never
// their arguments or results), ancestors first, each branch in seq order.
UNWIND $lineage AS l
CALL (l) {
  MATCH (m:Message {branchId: l.branchId})
  WHERE m.seq <= l.cutoff AND m.accountId = $accountId
  RETURN 'message' AS type, m {.id, .branchId, .seq, .role, .content, .runId, .createdAt} AS item,
         m.participantId AS participantId
  UNION ALL
  MATCH (t:ToolCall {branchId: l.branchId})
  WHERE t.seq <= l.cutoff AND t.accountId = $accountId
  RETURN 'tool_call' AS type, t {.id, .branchId, .seq, .runId, .tool, .status, .errorCode, .createdAt} AS item,
         t.participantId AS participantId
}
OPTIONAL MATCH (p:Participant {id: participantId, accountId: $accountId})
RETURN type, item, participantId, p.name AS participantName
ORDER BY l.depth DESC, item.seq ASC
