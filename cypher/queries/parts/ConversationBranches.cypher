// part: ConversationBranches
// The branches of the conversation cv (included where cv is bound): each with its fork
// point, its seq counter and its revision, as `branches`.
CALL (cv) {
  MATCH (x:Branch {conversationId: cv.id})
  OPTIONAL MATCH (x)-[f:FORKED_FROM]->(parent:Branch)
  RETURN collect({id: x.id, seq: x.seq, rev: x.rev, parentId: parent.id, afterSeq: f.afterSeq}) AS branches
}
