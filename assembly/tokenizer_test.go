package assembly

import "testing"

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
