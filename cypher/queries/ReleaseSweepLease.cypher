// name: ReleaseSweepLease
// Gives up a sweep's lease when its holder has finished: the next server's sweep need not
// wait for it to lapse.
MATCH (l:SweepLease {name: $name})
WHERE l.holder = $holder
SET l.until = $now
