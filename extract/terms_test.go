package extract

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// Terms are the words strings.FieldsFunc finds in the lower-cased text (runs of ASCII
// letters and digits) longer than two bytes and not stopwords, each once in the order it
// first appears: on random texts of words, separators, upper case and runes whose lower case
// is ASCII (the Kelvin sign) or longer (İ), with more than 16 distinct words in some.
func TestTermsSplitAsFieldsFunc(t *testing.T) {
	pieces := []string{"Revenue", "the", "CSV", "q3", "ab", "x", "vendor", "\u212aelvin", "\u0130stanbul", "naïve", "über",
		"2026", "and", " ", "-", "/", ", ", "\n", "—", "ÄÖ", "Sheet"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b strings.Builder
		for range r.IntN(60) {
			b.WriteString(pieces[r.IntN(len(pieces))])
			if r.IntN(3) == 0 {
				b.WriteString(strings.Repeat("w", r.IntN(5)))
				b.WriteString(string(rune('a' + r.IntN(26))))
			}
		}
		text := b.String()
		var want []string
		for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
		}) {
			if len(w) > 2 && !stopwords[w] && !slices.Contains(want, w) {
				want = append(want, w)
			}
		}
		got := Terms(text)
		if got == nil || !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("Terms(%q) = %q, want %q", text, got, want)
		}
	}
}
