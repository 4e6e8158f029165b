package assembly

import (
	"fmt"
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

// TestASCIIPiecesMatchTheSplitPattern checks the hand-written ASCII splitter of o200k_base
// against the library's pattern on random plain ASCII texts (isPlainASCII): the pieces it
// cuts, and the count of the whole text. The texts mix letter runs of both cases,
// contractions, digits, punctuation, slashes and every ASCII white-space character.
func TestASCIIPiecesMatchTheSplitPattern(t *testing.T) {
	tk := MustTokenizer("o200k_base")
	fragments := []string{"a", "Z", "word", "Word", "WORD", "wORD", "McDonald", "'s", "'S", "'t", "'re", "'VE", "'m", "'ll",
		"'Ld", "'d", "'x", "'", "1", "42", "2026", "12345678", ".", ",", "-", "...", "/", "//", "\"", "{", "}", ":", "=", "_",
		" ", " ", "  ", "   ", "\t", "\n", "\r", "\r\n", "\v", "\f", " \n ", "\n\n", "(", ")"}
	var plain []byte
	for c := byte(0); c < 128; c++ {
		if isPlainASCII(string(c)) {
			plain = append(plain, c)
		}
	}
	if len(plain) != 95+5 {
		t.Fatalf("got %d plain ASCII characters, want the 95 printable ones and 5 of white space", len(plain))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for n := rng.IntN(30); n >= 0; n-- {
			if rng.IntN(4) == 0 {
				b.WriteByte(plain[rng.IntN(len(plain))])
			} else {
				b.WriteString(fragments[rng.IntN(len(fragments))])
			}
		}
		text := b.String()
		var got []string
		for i := 0; i < len(text); {
			j := o200kPieceEnd(text, i)
			got = append(got, text[i:j])
			i = j
		}
		_, want, err := tk.codec.Encode(text)
		if err != nil {
			t.Fatal(err)
		}
		// The codec reports tokens, not pieces: join each piece's tokens back.
		if strings.Join(got, "") != text || !piecesCover(got, want) {
			t.Fatalf("pieces of %q:\n got %q\ntokens %q", text, got, want)
		}
		if n, err := tk.codec.Count(text); err != nil || tk.countASCII(text) != n {
			t.Fatalf("countASCII(%q) = %d, the codec counts %d (%v)", text, tk.countASCII(text), n, err)
		}
	}
}

// piecesCover reports whether every piece boundary falls on a token boundary, so that the
// pieces' counts add up to the text's: BPE never merges across the pattern's pieces, and a
// piece cut elsewhere than the pattern cuts would show as a boundary inside a token.
func piecesCover(pieces, tokens []string) bool {
	bounds := map[int]bool{0: true}
	at := 0
	for _, tok := range tokens {
		at += len(tok)
		bounds[at] = true
	}
	at = 0
	for _, p := range pieces {
		at += len(p)
		if !bounds[at] {
			return false
		}
	}
	return true
}

// The chunk cache holds at most chunkCacheBytes of chunks, however long the lines it is
// given, and counts stay exact when it starts over.
func TestChunkCacheIsBoundedInBytes(t *testing.T) {
	tk := &Tokenizer{codec: MustTokenizer("o200k_base").codec, name: "o200k_base", cache: map[string]int{}, pieces: map[string]int{}}
	line := strings.Repeat("EU,4.2M;US,7.9M;", 2000) // 32 KB, under the per-chunk limit
	want := tk.Count(line + "\n")
	for i := range 3000 {
		text := fmt.Sprintf("%d %s\n", i, line)
		if got := tk.Count(text); got < want {
			t.Fatalf("line %d counted %d tokens, fewer than the bare line's %d", i, got, want)
		}
		if tk.cacheBytes > chunkCacheBytes {
			t.Fatalf("after %d lines the cache holds %d bytes, over %d", i, tk.cacheBytes, chunkCacheBytes)
		}
	}
	if again := tk.Count(line + "\n"); again != want {
		t.Errorf("counted again after the cache started over: %d, want %d", again, want)
	}
}
