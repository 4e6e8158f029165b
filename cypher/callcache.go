package cypher

import "github.com/ctxgraph/ctxgraph/model"

// recentCallsSize is how many recently requested tool calls a Store remembers for the
// memories it derives from their results.
const recentCallsSize = 4096

// recentCallArgsLimit is the largest arguments a remembered call keeps; a call with larger
// ones is read again when its result comes.
const recentCallArgsLimit = 16 << 10

// recentCalls remembers what a memory derived from a call's result needs of the call — its
// tool, arguments and declared freshness, none of which changes once the call is recorded —
// for the calls this process recorded lately, so that a result arriving at the same process
// derives its memory without reading the call again. The oldest are forgotten first; a call
// it does not hold is read from the graph.
type recentCalls struct {
	calls ring[model.ToolCall]
}

// accountKey keys a ring by an account's record id.
func accountKey(accountID, id string) string { return accountID + "\x00" + id }

// put remembers a call of an account.
func (r *recentCalls) put(accountID string, c model.ToolCall) {
	if len(c.Arguments) <= recentCallArgsLimit {
		r.calls.put(accountKey(accountID, c.ID), c)
	}
}

// get returns a remembered call of an account.
func (r *recentCalls) get(accountID, id string) (model.ToolCall, bool) {
	return r.calls.get(accountKey(accountID, id))
}
