package extract

import (
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ctxgraph/ctxgraph/model"
)

// Value is one value a user message stated, with where it stands.
type Value = model.StatedValue

// MaxStatedValues is the most values a policy may have a message stand in as: the values of
// a message's record are worked out once, this many, and each policy takes its first ones.
const MaxStatedValues = 100

// StatedValues returns the identifiers, figures and names a message states, in the order
// they appear, each once, at most max (none when max <= 0):
//   - quoted strings ("…", “…” or '…'), without their quotes;
//   - identifiers: words mixing letters and digits or holding _ @ :// or a path or dotted
//     name (tok_9f8e7d, BK-48213, #A77 as A77, emails, URLs, src/main.go, example.com);
//   - figures: any word with a digit ($1,250, 3.5%, 2026-03-14, 10:30), with a month name
//     joined to its day and year ("March 14, 2026") and a time to its "am"/"pm";
//   - names: runs of two or more Capitalised words (Maria Lopez), without a common word
//     that opens the sentence ("Ask"), and all-caps codes (SFO) that are not common words.
func StatedValues(text string, max int) []Value {
	if max <= 0 {
		return nil
	}
	type span struct{ start, end int }
	var spans []span
	quoted := quotedSpans(text)
	for _, q := range quoted {
		spans = append(spans, span{q.start, q.end})
	}
	words := splitWords(text, quoted)
	for i := 0; i < len(words); i++ {
		w := words[i]
		s := text[w.start:w.end]
		switch {
		case isMonth(s) && i+1 < len(words) && isDay(text, words[i+1]) && joinable(text, w, words[i+1]):
			end := words[i+1].end
			i++
			if i+1 < len(words) && isYear(text, words[i+1]) && joinable(text, words[i], words[i+1]) {
				i++
				end = words[i].end
			}
			spans = append(spans, span{w.start, end})
		case isDay(text, w) && i+1 < len(words) && isMonth(text[words[i+1].start:words[i+1].end]) && joinable(text, w, words[i+1]):
			i++
			end := words[i].end
			if i+1 < len(words) && isYear(text, words[i+1]) && joinable(text, words[i], words[i+1]) {
				i++
				end = words[i].end
			}
			spans = append(spans, span{w.start, end})
		case hasDigit(s):
			end := w.end
			if i+1 < len(words) && isMeridiem(text[words[i+1].start:words[i+1].end]) && joinable(text, w, words[i+1]) {
				i++
				end = words[i].end
			}
			spans = append(spans, span{w.start, end})
		case isIdentifierWord(s) || isCode(s):
			spans = append(spans, span{w.start, w.end})
		case isCapitalised(s):
			j := i
			for j+1 < len(words) && joinable(text, words[j], words[j+1]) && isCapitalised(text[words[j+1].start:words[j+1].end]) {
				j++
			}
			first := i
			if w.sentenceStart && commonWords[strings.ToLower(s)] {
				first++
			}
			if j-first >= 1 {
				spans = append(spans, span{words[first].start, words[j].end})
			}
			i = j
		}
	}
	sort.SliceStable(spans, func(a, b int) bool { return spans[a].start < spans[b].start })
	var out []Value
	seen := map[string]bool{}
	for _, sp := range spans {
		t := text[sp.start:sp.end]
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, Value{Text: t, Locator: "bytes=" + strconv.Itoa(sp.start) + "-" + strconv.Itoa(sp.end)})
		if len(out) == max {
			break
		}
	}
	return out
}

// word is one whitespace-separated word with its surrounding punctuation trimmed.
type word struct {
	start, end    int  // the trimmed word
	rawEnd        int  // the end before trimming
	sentenceStart bool // the first word of the message, a line or a sentence
}

type qspan struct{ start, end, outerStart, outerEnd int }

// quotedSpans finds quoted strings: double quotes (straight or curly) anywhere, single
// quotes only where they cannot be apostrophes. Contents are 1 to 200 bytes on one line.
func quotedSpans(text string) []qspan {
	var out []qspan
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		var closer rune
		switch r {
		case '"':
			closer = '"'
		case '“':
			closer = '”'
		case '\'', '‘':
			prev, _ := utf8.DecodeLastRuneInString(text[:i])
			if i == 0 || unicode.IsSpace(prev) || strings.ContainsRune("([{:", prev) {
				closer = '\''
				if r == '‘' {
					closer = '’'
				}
			}
		}
		if closer == 0 {
			i += size
			continue
		}
		found := false
		for j := i + size; j < len(text) && j-i <= 200; {
			c, csize := utf8.DecodeRuneInString(text[j:])
			if c == '\n' {
				break
			}
			if c == closer && j > i+size {
				next, _ := utf8.DecodeRuneInString(text[j+csize:])
				if closer != '\'' || j+csize == len(text) || !unicode.IsLetter(next) && !unicode.IsDigit(next) {
					out = append(out, qspan{start: i + size, end: j, outerStart: i, outerEnd: j + csize})
					i = j + csize
					found = true
					break
				}
			}
			j += csize
		}
		if !found {
			i += size
		}
	}
	return out
}

const (
	leadingPunct  = "([{<*\"'“‘«#"
	trailingPunct = ")]}>*\"'”’».,;:!?…"
)

// splitWords cuts text into trimmed words, skipping the quoted strings.
func splitWords(text string, quoted []qspan) []word {
	var out []word
	sentence := true
	q := 0
	for i := 0; i < len(text); {
		for q < len(quoted) && quoted[q].outerEnd <= i {
			q++
		}
		if q < len(quoted) && i >= quoted[q].outerStart {
			i = quoted[q].outerEnd
			sentence = false
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if unicode.IsSpace(r) {
			if r == '\n' {
				sentence = true
			}
			i += size
			continue
		}
		start := i
		for i < len(text) {
			r, size := utf8.DecodeRuneInString(text[i:])
			if unicode.IsSpace(r) || q < len(quoted) && i == quoted[q].outerStart {
				break
			}
			i += size
		}
		w := word{start: start, end: i, rawEnd: i, sentenceStart: sentence}
		for w.start < w.end {
			r, size := utf8.DecodeRuneInString(text[w.start:])
			if !strings.ContainsRune(leadingPunct, r) {
				break
			}
			w.start += size
		}
		for w.end > w.start {
			r, size := utf8.DecodeLastRuneInString(text[w.start:w.end])
			if !strings.ContainsRune(trailingPunct, r) {
				break
			}
			w.end -= size
		}
		// Possessives belong to the name, not to the value.
		for _, suffix := range []string{"'s", "’s"} {
			s := text[w.start:w.end]
			if base := strings.TrimSuffix(s, suffix); base != s && isCapitalised(base) {
				w.end -= len(suffix)
				break
			}
		}
		tail := strings.TrimRight(text[w.end:w.rawEnd], ")]}>*\"'”’»")
		sentence = strings.HasSuffix(tail, ".") || strings.HasSuffix(tail, "!") ||
			strings.HasSuffix(tail, "?") || strings.HasSuffix(tail, "…")
		if w.start < w.end {
			out = append(out, w)
		} else if tail != "" {
			sentence = sentence || strings.ContainsAny(tail, "-*•")
		}
	}
	return out
}

// joinable reports whether b directly follows a in one phrase: nothing but spaces (and a
// comma after a day, as in "March 14, 2026") between them, on one line.
func joinable(text string, a, b word) bool {
	gap := text[a.end:b.start]
	if strings.ContainsAny(gap, "\n") {
		return false
	}
	between := strings.TrimSpace(gap)
	return between == "" || between == "," && hasDigit(text[a.start:a.end])
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			return true
		}
	}
	return false
}

// isIdentifierWord reports whether a word without digits is still an identifier: an email,
// a handle, a URL, a snake_case name, a path or a dotted name.
func isIdentifierWord(s string) bool {
	letters := strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
	if !letters || len(s) < 2 {
		return false
	}
	switch {
	case strings.Contains(s, "://"), strings.Contains(s, "_"):
		return true
	case strings.Contains(s, "@"):
		at := strings.IndexByte(s, '@')
		return at == 0 || strings.Contains(s[at:], ".")
	case strings.HasPrefix(s, "/"), strings.HasPrefix(s, "~/"), strings.HasPrefix(s, "./"), strings.HasPrefix(s, "../"):
		return true
	case strings.Contains(s, "/") && strings.Contains(s, "."):
		return true
	case strings.Contains(s, "."):
		parts := strings.Split(s, ".")
		for _, p := range parts {
			if len(p) < 2 {
				return false
			}
		}
		return true
	}
	return false
}

// isCode reports whether a word is an all-caps code such as SFO or USD.
func isCode(s string) bool {
	if len(s) < 2 || len(s) > 10 || commonWords[strings.ToLower(s)] || capsSkip[s] {
		return false
	}
	upper := 0
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			upper++
		case r >= '0' && r <= '9', r == '-':
		default:
			return false
		}
	}
	return upper >= 2
}

// isCapitalised reports whether a word is a capitalised name-like word: an upper-case letter
// followed by letters (at least one lower case), apostrophes or hyphens.
func isCapitalised(s string) bool {
	r, size := utf8.DecodeRuneInString(s)
	if !unicode.IsUpper(r) || size == len(s) {
		return false
	}
	lower := false
	for _, c := range s[size:] {
		switch {
		case unicode.IsLower(c):
			lower = true
		case unicode.IsUpper(c), c == '\'', c == '’', c == '-':
		default:
			return false
		}
	}
	return lower
}

var months = map[string]bool{
	"january": true, "february": true, "march": true, "april": true, "may": true, "june": true,
	"july": true, "august": true, "september": true, "october": true, "november": true,
	"december": true, "jan": true, "feb": true, "mar": true, "apr": true, "jun": true,
	"jul": true, "aug": true, "sep": true, "sept": true, "oct": true, "nov": true, "dec": true,
}

func isMonth(s string) bool { return isCapitalised(s) && months[strings.ToLower(s)] }

// isDay reports whether a word is a day of the month: 1 to 31, maybe with st, nd, rd or th.
func isDay(text string, w word) bool {
	s := text[w.start:w.end]
	for _, suffix := range []string{"st", "nd", "rd", "th"} {
		s = strings.TrimSuffix(s, suffix)
	}
	n, err := strconv.Atoi(s)
	return err == nil && n >= 1 && n <= 31 && len(s) <= 2
}

func isYear(text string, w word) bool {
	s := text[w.start:w.end]
	n, err := strconv.Atoi(s)
	return err == nil && len(s) == 4 && n >= 1900 && n <= 2200
}

func isMeridiem(s string) bool {
	switch strings.ToLower(s) {
	case "am", "pm", "a.m", "p.m":
		return true
	}
	return false
}

// capsSkip are all-caps words that are not codes.
var capsSkip = map[string]bool{"OK": true, "AM": true, "PM": true, "ASAP": true, "FYI": true, "TBD": true, "PS": true, "NB": true}

// commonWords are words that do not make a value alone, nor start a name when they open a
// sentence.
var commonWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the i me my mine we us our you your he she it they them their his her
		this that these those there here and or but so if then than when where what which who whom why how
		is are was were be been am do does did have has had can could would should will shall may might must
		please thanks thank hi hello hey dear yes no not also just only very ask tell book find show get give
		send check call email contact let make use set put take bring cancel change update add remove
		from to on in at for with by of about after before into over under between during until since
		today tomorrow yesterday monday tuesday wednesday thursday friday saturday sunday
		sure ok okay great good fine now again still maybe perhaps actually also note remember`) {
		m[w] = true
	}
	return m
}()
