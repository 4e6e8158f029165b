// Drop-in endpoints (DESIGN §9): a client's stable key names one conversation of its
// account, and a list is matched against a conversation's chain points by hash.
CREATE CONSTRAINT conversation_client_key IF NOT EXISTS FOR (n:Conversation) REQUIRE (n.accountId, n.clientKey) IS UNIQUE;
CREATE INDEX chain_point_hash IF NOT EXISTS FOR (n:ChainPoint) ON (n.conversationId, n.sha256);
CREATE INDEX chain_point_conversation IF NOT EXISTS FOR (n:ChainPoint) ON (n.conversationId);
