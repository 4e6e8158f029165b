// part: RecordBatches
// The rows of a whole read's statement (included after its rows (kind, record)): (kind,
// records), the records of one kind in batches of about 256 KiB of text. A row per record
// costs Neo4j and the driver about as much again as the records; a whole history in one
// row is one Bolt message of the history's size, which the driver reassembles in a buffer
// it grows by each chunk it receives (quadratic in the message) and then keeps for the
// connection. A record weighs its long texts' length and 256 for the rest; one heavier
// than a batch has a row of its own.
WITH kind, collect(record) AS recs
WITH kind, recs, [r IN recs | 256 + size(coalesce(r.content, '')) + size(coalesce(r.arguments, '')) +
                              size(coalesce(r.summary, '')) + size(coalesce(r.safeSummary, '')) + size(coalesce(r.data, '')) +
                              size(coalesce(r.errorMessage, '')) + size(coalesce(r.state, ''))] AS weights
// Where each batch starts: a new one where a record does not fit in what is left.
WITH kind, recs, reduce(at = {starts: [], room: 0}, i IN range(0, size(recs) - 1) |
       CASE WHEN at.room < weights[i] THEN {starts: at.starts + i, room: 262144 - weights[i]}
            ELSE {starts: at.starts, room: at.room - weights[i]} END).starts AS starts
UNWIND range(0, size(starts) - 1) AS j
RETURN kind, recs[starts[j]..coalesce(starts[j + 1], size(recs))] AS records
