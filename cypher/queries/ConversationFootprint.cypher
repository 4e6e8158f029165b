// name: ConversationFootprint
// What a conversation's nodes and their outgoing relationships take in the store, by the
// node's first label, as Neo4j 5's record format lays them out: a node record 15 B, a
// relationship record 34 B, each property one or more 8-byte blocks in 41-byte property
// records of four blocks (a string up to 15 characters, a number, a boolean or a temporal
// value inline, two blocks), a longer string or a list also 128-byte dynamic records of 120
// bytes of data each. Label, index and relationship-group records are left out. An
// estimate for comparing layouts (the benchmark's bytes per generation), not a size on disk:
// it reads every node of the conversation.
MATCH (n)
WHERE n.conversationId = $conversationId AND n.accountId = $accountId
CALL (n) {
  UNWIND keys(n) AS k
  WITH n[k] AS v
  WITH CASE WHEN v IS :: STRING AND size(v) > 15 THEN size(v)
            WHEN v IS :: LIST<ANY> THEN reduce(b = 0, x IN v | b + size(toString(x)) + 2)
            ELSE 0 END AS dynamic
  RETURN sum(CASE WHEN dynamic > 0 THEN 1 ELSE 2 END) AS nodeBlocks, sum(128 * ((dynamic + 119) / 120)) AS nodeDynamic
}
CALL (n) {
  OPTIONAL MATCH (n)-[r]->()
  WITH r WHERE r IS NOT NULL
  CALL (r) {
    UNWIND keys(r) AS k
    WITH r[k] AS v
    WITH CASE WHEN v IS :: STRING AND size(v) > 15 THEN size(v)
              WHEN v IS :: LIST<ANY> THEN reduce(b = 0, x IN v | b + size(toString(x)) + 2)
              ELSE 0 END AS dynamic
    RETURN sum(CASE WHEN dynamic > 0 THEN 1 ELSE 2 END) AS relBlocks, sum(128 * ((dynamic + 119) / 120)) AS relDynamic
  }
  RETURN count(r) AS rels, sum(34 + 41 * ((relBlocks + 3) / 4) + relDynamic) AS relBytes
}
WITH labels(n)[0] AS label, count(n) AS nodes, sum(rels) AS relationships,
     sum(15 + 41 * ((nodeBlocks + 3) / 4) + nodeDynamic + relBytes) AS bytes
RETURN label, nodes, relationships, bytes
ORDER BY label
