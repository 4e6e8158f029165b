// name: LongestChainPoint
// Among the chain points of a conversation whose hash is one of $hashes (the hashes of a
// client list's prefixes), the one of the longest list: where that list and the
// conversation part. One index seek per hash.
UNWIND $hashes AS h
MATCH (p:ChainPoint {conversationId: $conversationId, sha256: h})
WHERE p.accountId = $accountId
RETURN p
ORDER BY p.length DESC, p.createdAt
LIMIT 1
