package lineage

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultCacheSize is how many records a Cache keeps across conversations before it drops
// the least recently used conversation.
const DefaultCacheSize = 500_000

// Cache holds conversation copies up to a number of records in all. A nil Cache holds
// nothing.
type Cache struct {
	// full and delta count the reads of whole conversations and of changes since a copy;
	// shared the snapshots that took over a lineage view built before.
	full, delta, shared atomic.Int64

	mu       sync.Mutex
	limit    int
	convs    map[string]*Conversation
	ofBranch map[string]string
	// reading holds the full reads in flight, by account and branch; each channel closes
	// when its read has stored its copy or failed.
	reading map[string]chan struct{}
}

// NewCache returns a cache of up to limit records.
func NewCache(limit int) *Cache {
	return &Cache{limit: limit, convs: map[string]*Conversation{}, ofBranch: map[string]string{},
		reading: map[string]chan struct{}{}}
}

// CacheStats counts a cache's conversation reads: full reads of a whole conversation, and
// delta reads of the changes since a cached copy; and the snapshots whose candidates were a
// lineage view built before (SharedViews).
type CacheStats struct {
	FullReads, DeltaReads, SharedViews int64
}

// Stats reports how the cache's conversations have been read so far.
func (rc *Cache) Stats() CacheStats {
	if rc == nil {
		return CacheStats{}
	}
	return CacheStats{FullReads: rc.full.Load(), DeltaReads: rc.delta.Load(), SharedViews: rc.shared.Load()}
}

// CountRead counts a read of a conversation: in full, or of its changes since a copy.
func (rc *Cache) CountRead(full bool) {
	switch {
	case rc == nil:
	case full:
		rc.full.Add(1)
	default:
		rc.delta.Add(1)
	}
}

// CountShared counts a snapshot whose candidates were a lineage view built before.
func (rc *Cache) CountShared() {
	if rc != nil {
		rc.shared.Add(1)
	}
}

// FirstRead is called by a request that found no copy for a branch (key: account and
// branch). When no other request is reading that branch's conversation in full, it returns
// lead: the caller reads it and calls done once it has stored the copy or failed (done may
// be called again). Otherwise it waits until that read ends, and the caller looks for the
// copy again. Without it, the first assemblies of a conversation that arrive together would
// each read it whole.
func (rc *Cache) FirstRead(ctx context.Context, key string) (lead bool, done func(), err error) {
	rc.mu.Lock()
	if ch, ok := rc.reading[key]; ok {
		rc.mu.Unlock()
		select {
		case <-ch:
			return false, nil, nil
		case <-ctx.Done():
			return false, nil, ctx.Err()
		}
	}
	ch := make(chan struct{})
	rc.reading[key] = ch
	rc.mu.Unlock()
	return true, sync.OnceFunc(func() {
		rc.mu.Lock()
		delete(rc.reading, key)
		rc.mu.Unlock()
		close(ch)
	}), nil
}

// Lookup returns the copy of the conversation a branch belongs to, or nil; known is false
// when the cache has not seen the branch.
func (rc *Cache) Lookup(accountID, branchID string) (c *Conversation, known bool) {
	if rc == nil {
		return nil, true
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	convID, known := rc.ofBranch[accountID+"/"+branchID]
	if !known {
		return nil, false
	}
	return rc.conversation(accountID, convID), true
}

// conversation returns the copy of a conversation, or nil; rc.mu is held.
func (rc *Cache) conversation(accountID, conversationID string) *Conversation {
	c := rc.convs[accountID+"/"+conversationID]
	if c != nil {
		c.used = time.Now()
	}
	return c
}

// LookupConversation returns the copy of a conversation, or nil.
func (rc *Cache) LookupConversation(accountID, conversationID string) *Conversation {
	if rc == nil {
		return nil
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.conversation(accountID, conversationID)
}

// Store keeps a copy with the branches it was read with, dropping the least recently used
// copies beyond the limit.
func (rc *Cache) Store(accountID string, branches []Fork, c *Conversation) {
	if rc == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	c.used = time.Now()
	for _, b := range branches {
		rc.ofBranch[accountID+"/"+b.ID] = c.id
	}
	rc.convs[accountID+"/"+c.id] = c
	for {
		total := 0
		var oldest string
		for k, x := range rc.convs {
			x.mu.RLock()
			total += len(x.byID)
			x.mu.RUnlock()
			if oldest == "" || x.used.Before(rc.convs[oldest].used) {
				oldest = k
			}
		}
		if total <= rc.limit || len(rc.convs) <= 1 {
			return
		}
		delete(rc.convs, oldest)
	}
}

// Drop forgets a conversation (after its deletion).
func (rc *Cache) Drop(accountID, conversationID string) {
	if rc == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	delete(rc.convs, accountID+"/"+conversationID)
}
