package model

import (
	"slices"
	"testing"
)

func TestCausalChainKeepsTheNewestOfEachLineOfWork(t *testing.T) {
	tests := []struct {
		name           string
		start          []string
		previous, next []string
		want           []string
	}{
		{"a write past the sent bookmark replaces it", []string{"a"}, []string{"a"}, []string{"b"}, []string{"b"}},
		{"a unit of work that started elsewhere adds its end", []string{"a"}, nil, []string{"c"}, []string{"a", "c"}},
		{"nothing new keeps the chain", []string{"a"}, []string{"a"}, nil, []string{"a"}},
		{"an end already held is not repeated", []string{"a", "b"}, []string{"a"}, []string{"b"}, []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCausalChain(tt.start)
			c.Advance(tt.previous, tt.next)
			if got := c.Bookmarks(); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// A nil chain is none; joining chains keeps each bookmark once, in order.
func TestJoinedBookmarksAndTheNilChain(t *testing.T) {
	var none *CausalChain
	none.Advance(nil, []string{"x"})
	if none.Sent() || none.Bookmarks() != nil {
		t.Fatalf("a nil chain holds %q, sent %v", none.Bookmarks(), none.Sent())
	}
	got := JoinedBookmarks(NewCausalChain([]string{"a", "b"}), none, NewCausalChain([]string{"b", "c"}))
	if want := []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
