// Policy versions as data (DESIGN §8). A version is stored per account, keyed by the
// account and its content id: two accounts may hold a version of the same content, and an
// account holds each once, which makes storing it again (MERGE) safe under concurrency. An
// account has at most one default.
CREATE CONSTRAINT policy_version_account_id IF NOT EXISTS FOR (n:PolicyVersion) REQUIRE (n.accountId, n.id) IS UNIQUE;
CREATE CONSTRAINT policy_default_account IF NOT EXISTS FOR (n:PolicyDefault) REQUIRE n.accountId IS UNIQUE;
