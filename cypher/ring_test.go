package cypher

import "testing"

func TestRingForgetsTheOldestPut(t *testing.T) {
	r := ring[int]{size: 3}
	r.put("a", 1)
	r.put("b", 2)
	r.put("a", 3) // put again: kept from this put on
	r.put("c", 4) // the slot of a's first put
	if v, ok := r.get("a"); !ok || v != 3 {
		t.Errorf("got a = %d, %v, want 3: the reuse of its first put's slot must not forget a key put again", v, ok)
	}
	r.put("d", 5) // forgets b, the oldest put
	if _, ok := r.get("b"); ok {
		t.Errorf("b is kept after three newer puts, want it forgotten")
	}
	if v, ok := r.take("c"); !ok || v != 4 {
		t.Errorf("take c: got %d, %v, want 4", v, ok)
	}
	if _, ok := r.get("c"); ok {
		t.Errorf("c is kept after it was taken")
	}
	if got := r.len(); got != 2 {
		t.Errorf("got %d kept, want 2 (a and d)", got)
	}
	var none ring[int]
	none.put("a", 1)
	if _, ok := none.get("a"); ok {
		t.Errorf("a ring of size zero kept a value")
	}
}
