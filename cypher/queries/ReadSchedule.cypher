// name: ReadSchedule
// One schedule of an account.
MATCH (s:Schedule {id: $id, accountId: $accountId})
RETURN s
