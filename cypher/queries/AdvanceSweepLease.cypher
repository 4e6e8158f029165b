// name: AdvanceSweepLease
// Moves a sweep's cursor on, while $holder still holds its lease; no row otherwise.
MATCH (l:SweepLease {name: $name})
WHERE l.holder = $holder
SET l.cursor = CASE WHEN $cursor > l.cursor THEN $cursor ELSE l.cursor END
RETURN l.cursor AS cursor
