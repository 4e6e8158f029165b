package assembly

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestTokenizerCountsWithTheShippedVocabulary(t *testing.T) {
	tk := MustTokenizer("o200k_base")
	cases := []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"Check our 2023 vendor contracts against the new security addendum before Friday.", 16},
	}
	for _, c := range cases {
		if got := tk.Count(c.text); got != c.want {
			t.Errorf("Count(%q) got %d, want %d", c.text, got, c.want)
		}
	}
	if got := EncodingForModel("gpt-4-turbo"); got != "cl100k_base" {
		t.Errorf("EncodingForModel(gpt-4-turbo) got %s, want cl100k_base", got)
	}
	if got := EncodingForModel("gpt-4.1"); got != "o200k_base" {
		t.Errorf("EncodingForModel(gpt-4.1) got %s, want o200k_base", got)
	}
	if _, err := NewTokenizer("cl100k_base"); err != nil {
		t.Errorf("cl100k_base: %v", err)
	}
}

// TestChunkedCountIsExact checks the chunked, cached count against the tokenizer run on the
// whole text, for random texts built from the pieces that meet at line ends: words, digits,
// punctuation, slashes, spaces before and after newlines, blank lines, CRLF and non-ASCII
// letters, in both encodings.
func TestChunkedCountIsExact(t *testing.T) {
	fragments := []string{"\n", "\n", "\n", "\r\n", "\n\n", "  \n", "\n  ", " ", "word", "Word", "x", "42", "2026-12-02",
		".", ".\n", "/", "/path", ": ", "- ", "\"quoted\"", "{\"k\":1}", "é", "日本語", "🙂", "'s", "\t", "(", ")", "—", "\u00a0"}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, enc := range []string{"o200k_base", "cl100k_base"} {
		tk := MustTokenizer(enc)
		for i := 0; i < 3000; i++ {
			var b strings.Builder
			for n := rng.IntN(40); n >= 0; n-- {
				b.WriteString(fragments[rng.IntN(len(fragments))])
			}
			text := b.String()
			ids, _, err := tk.codec.Encode(text)
			if err != nil {
				t.Fatal(err)
			}
			if got := tk.Count(text); got != len(ids) {
				t.Fatalf("%s: Count(%q) = %d, whole-text encoding gives %d", enc, text, got, len(ids))
			}
		}
	}
}
