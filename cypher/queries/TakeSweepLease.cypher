// name: TakeSweepLease
// Takes the lease of one kind of sweep ($name) for $holder until $until, when it is free,
// lapsed or $holder's already, and returns how far the sweep has got (cursor); no row when
// another server holds it. The SET comes first so that the lease node is write-locked before
// its holder is read: of two servers taking a lapsed lease at once, the second reads what the
// first committed.
MERGE (l:SweepLease {name: $name})
  ON CREATE SET l.cursor = datetime({epochMillis: 0})
SET l.lockedAt = $now
WITH l
WHERE l.holder IS NULL OR l.holder = $holder OR l.until < $now
SET l.holder = $holder, l.until = $until
RETURN l.cursor AS cursor
