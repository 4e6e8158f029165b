package lineage

import "time"

// InstructionsAsOf is the version of a conversation's or a participant's instructions in
// force at asOf (DESIGN §8): of the versions, each text with when it was recorded, in the
// order they were written, the last recorded at or before asOf; "" when none was. An
// assembly reads its instructions as of its asOf, so that its replay sends the text it sent
// however the instructions changed since.
func InstructionsAsOf(texts []string, recordedAt []time.Time, asOf time.Time) string {
	text := ""
	for i := range min(len(texts), len(recordedAt)) {
		if !recordedAt[i].After(asOf) {
			text = texts[i]
		}
	}
	return text
}
