package cypher

import (
	"sync"

	"github.com/ctxgraph/ctxgraph/model"
)

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
	mu    sync.Mutex
	calls map[string]model.ToolCall
	order []string
	next  int
}

func callKey(accountID, id string) string { return accountID + "\x00" + id }

// put remembers a call of an account.
func (r *recentCalls) put(accountID string, c model.ToolCall) {
	if len(c.Arguments) > recentCallArgsLimit {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls, r.order = map[string]model.ToolCall{}, make([]string, recentCallsSize)
	}
	key := callKey(accountID, c.ID)
	if old := r.order[r.next]; old != "" {
		delete(r.calls, old)
	}
	r.order[r.next], r.calls[key] = key, c
	r.next = (r.next + 1) % len(r.order)
}

// get returns a remembered call of an account.
func (r *recentCalls) get(accountID, id string) (model.ToolCall, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.calls[callKey(accountID, id)]
	return c, ok
}
