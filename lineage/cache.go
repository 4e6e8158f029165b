package lineage

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Cache holds conversation copies up to a number of bytes in all (Conversation.Bytes,
// an estimate of the heap each holds), dropping the least recently used beyond it. A copy
// larger than the whole limit is not kept: its conversation is read in full by every
// assembly, which is slow but keeps the process within what it was given. A nil Cache holds
// nothing.
type Cache struct {
	// full and delta count the reads of whole conversations and of changes since a copy;
	// shared the snapshots that took over a lineage view built before; dropped the copies
	// given up for room; held the bytes the copies held when last counted.
	full, delta, shared, dropped, held atomic.Int64

	mu       sync.Mutex
	limit    int64
	convs    map[string]*Conversation
	ofBranch map[string]string
	// reading holds the full reads in flight, by account and branch; each channel closes
	// when its read has stored its copy or failed.
	reading map[string]chan struct{}
}

// NewCache returns a cache of up to limit bytes.
func NewCache(limit int64) *Cache {
	return &Cache{limit: limit, convs: map[string]*Conversation{}, ofBranch: map[string]string{},
		reading: map[string]chan struct{}{}}
}

// CacheStats counts a cache's conversation reads: full reads of a whole conversation, and
// delta reads of the changes since a cached copy; the snapshots whose candidates were a
// lineage view built before (SharedViews); the copies dropped for room (Dropped); and the
// bytes the copies hold (Bytes, as estimated when a copy was last stored) of the Limit.
type CacheStats struct {
	FullReads, DeltaReads, SharedViews, Dropped int64
	Bytes, Limit                                int64
}

// Stats reports how the cache's conversations have been read so far, and what they hold.
func (rc *Cache) Stats() CacheStats {
	if rc == nil {
		return CacheStats{}
	}
	return CacheStats{FullReads: rc.full.Load(), DeltaReads: rc.delta.Load(), SharedViews: rc.shared.Load(),
		Dropped: rc.dropped.Load(), Bytes: rc.held.Load(), Limit: rc.limit}
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

// Store keeps a copy with the branches it was read with (or brought up to date), dropping
// the least recently used copies while they hold more than the limit. A copy larger than
// the whole limit is dropped alone.
func (rc *Cache) Store(accountID string, branches []Fork, c *Conversation) {
	if rc == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	key := accountID + "/" + c.id
	if c.Bytes() > rc.limit {
		// Larger than the whole limit: not kept, and no other copy is dropped for it.
		rc.forget(key)
		rc.dropped.Add(1)
	} else {
		c.used = time.Now()
		for _, b := range branches {
			rc.ofBranch[accountID+"/"+b.ID] = c.id
		}
		rc.convs[key] = c
	}
	for {
		var total int64
		var oldest string
		for k, x := range rc.convs {
			total += x.Bytes()
			if oldest == "" || x.used.Before(rc.convs[oldest].used) {
				oldest = k
			}
		}
		rc.held.Store(total)
		if total <= rc.limit || len(rc.convs) == 0 {
			return
		}
		rc.forget(oldest)
		rc.dropped.Add(1)
	}
}

// forget drops a copy with its branches; rc.mu is held.
func (rc *Cache) forget(key string) {
	delete(rc.convs, key)
	i := strings.LastIndexByte(key, '/')
	account, conversationID := key[:i+1], key[i+1:]
	for b, id := range rc.ofBranch {
		if id == conversationID && strings.HasPrefix(b, account) {
			delete(rc.ofBranch, b)
		}
	}
}

// Drop forgets a conversation (after its deletion).
func (rc *Cache) Drop(accountID, conversationID string) {
	if rc == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.forget(accountID + "/" + conversationID)
}
