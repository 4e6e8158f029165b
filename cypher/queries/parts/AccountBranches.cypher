// part: AccountBranches
// The entries of $branches (each {id, since}: a branch's id, and the revision after which
// it is read) whose branch is the account's, as `branches`: a whole read's statements read
// the branches its head listed, and a branch of another account as none.
UNWIND $branches AS x
MATCH (:Branch {id: x.id, accountId: $accountId})
WITH collect(x) AS branches
