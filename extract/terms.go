package extract

import "strings"

// stopwords are left out of relevance matching.
var stopwords = map[string]bool{"the": true, "and": true, "for": true, "with": true, "that": true, "this": true,
	"what": true, "are": true, "was": true, "you": true, "your": true, "from": true, "have": true, "has": true,
	"can": true, "will": true, "not": true, "but": true, "our": true, "all": true, "any": true, "its": true}

// Terms are the words of a text that relevance matching compares (DESIGN §4: a memory ranks
// by the overlap of its summary with the message answered): the runs of ASCII letters and
// digits of its lower-cased form longer than two bytes, stopwords left out, each once, in
// the order they first appear. They share the lower-cased text's bytes. The result is never
// nil, so that a memory's terms worked out once (model.MemoryFacts.Terms) say so even when
// there are none.
func Terms(text string) []string {
	lower := strings.ToLower(text)
	out := []string{}
	var seen map[string]bool
	start := -1
	add := func(end int) {
		w := lower[start:end]
		start = -1
		if len(w) <= 2 || stopwords[w] {
			return
		}
		// A summary has a few words: a look along them is cheaper than a map until it has many.
		if seen == nil && len(out) >= 16 {
			seen = make(map[string]bool, 2*len(out))
			for _, o := range out {
				seen[o] = true
			}
		}
		if seen != nil {
			if seen[w] {
				return
			}
			seen[w] = true
		} else {
			for _, o := range out {
				if o == w {
					return
				}
			}
		}
		out = append(out, w)
	}
	for i, r := range lower {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			add(i)
		}
	}
	if start >= 0 {
		add(len(lower))
	}
	return out
}
