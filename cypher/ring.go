package cypher

import "sync"

// ring keeps the values last put, by key, at most size of them (none when size is zero): a
// put forgets the value put size puts before it, unless its key was put again since. It is
// safe for concurrent use.
type ring[V any] struct {
	mu     sync.Mutex
	size   int
	values map[string]ringEntry[V]
	keys   []string
	next   int
}

// ringEntry is a value and the slot of the ring that holds its key.
type ringEntry[V any] struct {
	value V
	slot  int
}

// put keeps v under key.
func (r *ring[V]) put(key string, v V) {
	if r.size == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.values == nil {
		r.values, r.keys = map[string]ringEntry[V]{}, make([]string, r.size)
	}
	if old := r.keys[r.next]; old != "" {
		if e, ok := r.values[old]; ok && e.slot == r.next {
			delete(r.values, old)
		}
	}
	r.keys[r.next], r.values[key] = key, ringEntry[V]{value: v, slot: r.next}
	r.next = (r.next + 1) % r.size
}

// get returns the value kept under key.
func (r *ring[V]) get(key string) (V, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.values[key]
	return e.value, ok
}

// take returns the value kept under key and forgets it.
func (r *ring[V]) take(key string) (V, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.values[key]
	delete(r.values, key)
	return e.value, ok
}

// len is how many values are kept.
func (r *ring[V]) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.values)
}
