// name: LocateRecords
// Where each of the given ids lives: its label, conversation, branch and seq. Ids of other
// accounts, and records of a conversation that is being deleted, are not found.
UNWIND $ids AS id
CALL (id) {
  MATCH (n:Message {id: id, accountId: $accountId}) RETURN n, 'Message' AS label
  UNION MATCH (n:ModelRun {id: id, accountId: $accountId}) RETURN n, 'ModelRun' AS label
  UNION MATCH (n:ToolCall {id: id, accountId: $accountId}) RETURN n, 'ToolCall' AS label
  UNION MATCH (n:ToolArtifact {id: id, accountId: $accountId}) RETURN n, 'ToolArtifact' AS label
  UNION MATCH (n:ToolMemory {id: id, accountId: $accountId}) RETURN n, 'ToolMemory' AS label
  UNION MATCH (n:Participant {id: id, accountId: $accountId}) RETURN n, 'Participant' AS label
  UNION MATCH (n:Branch {id: id, accountId: $accountId}) RETURN n, 'Branch' AS label
  UNION MATCH (n:Checkpoint {id: id, accountId: $accountId}) RETURN n, 'Checkpoint' AS label
  UNION MATCH (n:SkillState {id: id, accountId: $accountId}) RETURN n, 'SkillState' AS label
}
WITH id, label, n
WHERE EXISTS { MATCH (cv:Conversation {id: n.conversationId}) WHERE cv.deletedAt IS NULL }
RETURN id, label, n
