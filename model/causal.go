package model

import (
	"context"
	"slices"
	"sync"
)

// BookmarkField names the request header that carries a causal chain's bookmarks (DESIGN
// §11): errors about the bookmarks a client sent name it as their field.
const BookmarkField = "X-Ctxgraph-Bookmark"

// CausalChain is what a request's reads must have seen: the bookmarks of the writes before
// it (those the client sent back, and this server's own), advanced by each write it makes.
// A store serves a request's reads from a database member that has applied them, so that a
// client that writes through one server and reads through another, on a cluster whose
// followers answer reads, still sees its own writes. The bookmarks are the database's own
// opaque values. It is safe for concurrent use, and a nil chain is none: it holds no
// bookmarks and advances nowhere.
type CausalChain struct {
	mu        sync.Mutex
	bookmarks []string
	sent      bool
}

// NewCausalChain returns a chain that starts from bookmarks: those a client sent back.
func NewCausalChain(bookmarks []string) *CausalChain {
	c := &CausalChain{sent: len(bookmarks) > 0}
	c.Advance(nil, bookmarks)
	return c
}

// Sent reports whether the chain started from bookmarks a client sent back.
func (c *CausalChain) Sent() bool { return c != nil && c.sent }

// Forget drops the chain's bookmarks: the database no longer has the writes they name (it
// was restored from a backup, or replaced), and waiting for them would never end.
func (c *CausalChain) Forget() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bookmarks = nil
}

// Bookmarks returns a copy of the chain's bookmarks.
func (c *CausalChain) Bookmarks() []string {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.bookmarks)
}

// Advance replaces previous, the bookmarks a unit of work started from, with next, those its
// end returned: the chain then holds the newest bookmark of every line of work that
// advanced it, and of none that a later one already covers.
func (c *CausalChain) Advance(previous, next []string) {
	if c == nil || len(next) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.bookmarks[:0]
	for _, b := range c.bookmarks {
		if !slices.Contains(previous, b) && !slices.Contains(next, b) {
			kept = append(kept, b)
		}
	}
	c.bookmarks = append(kept, next...)
}

// JoinedBookmarks returns the bookmarks of every chain, each once, in order: what a unit of
// work that must see what each of them saw starts from.
func JoinedBookmarks(chains ...*CausalChain) []string {
	var out []string
	for _, c := range chains {
		for _, b := range c.Bookmarks() {
			if !slices.Contains(out, b) {
				out = append(out, b)
			}
		}
	}
	return out
}

type causalKey struct{}

// WithCausalChain returns ctx carrying chain: the store starts every unit of work of the
// request from it and advances it after each.
func WithCausalChain(ctx context.Context, chain *CausalChain) context.Context {
	return context.WithValue(ctx, causalKey{}, chain)
}

// CausalChainOf returns the chain ctx carries, or nil.
func CausalChainOf(ctx context.Context) *CausalChain {
	c, _ := ctx.Value(causalKey{}).(*CausalChain)
	return c
}
