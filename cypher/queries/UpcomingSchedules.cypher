// name: UpcomingSchedules
// The enabled schedules of every account, soonest tick first, as far as a scheduler needs
// them to know what is due and when to look again: the scheduler's own read, the one query
// that is not an account's. Disabled schedules have no nextRunAt; the range index on it
// answers the order.
MATCH (s:Schedule)
WHERE s.nextRunAt IS NOT NULL
RETURN s {.id, .accountId, .cron, .timezone, .nextRunAt} AS s
ORDER BY s.nextRunAt
LIMIT $limit
