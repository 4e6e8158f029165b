// name: ListConversations
// An account's conversations, newest first (by createdAt, then id), after the cursor's
// position when one is given, whose title contains $title (ignoring case) when it is set:
// $limit of them, one more than a page, to tell whether another page follows. The
// (accountId, createdAt) index answers the account's seek.
MATCH (c:Conversation {accountId: $accountId})
WHERE c.deletedAt IS NULL
  AND ($title IS NULL OR toLower(c.title) CONTAINS toLower($title))
  AND ($afterAt IS NULL OR c.createdAt < $afterAt OR (c.createdAt = $afterAt AND c.id < $afterId))
RETURN c
ORDER BY c.createdAt DESC, c.id DESC
LIMIT $limit
