// An erased account leaves one AccountErasure node (DESIGN §10): the writes that create an
// account's first records check it, and every server refuses the account's requests.
CREATE CONSTRAINT account_erasure_account IF NOT EXISTS FOR (n:AccountErasure) REQUIRE n.accountId IS UNIQUE;
