package extract

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// textPick is one line (or the head of an over-long first line) a text digest quotes.
type textPick struct {
	line  int // 1-based
	text  string
	bytes int  // > 0: only this many bytes of the line's head are quoted
	tail  bool // taken from the end
	of    int  // the length of a line whose head only is quoted
}

func deriveText(r Result, call string, s Settings, count Counter) Memory {
	body := r.Body
	text := body
	if len(text) > 0 && text[len(text)-1] == '\n' {
		text = text[:len(text)-1]
	}
	total := bytes.Count(text, []byte{'\n'}) + 1
	safe := fmt.Sprintf("%s result: text, %s, %d bytes", safeCall(r), plural(total, "line"), len(body))

	whole := call + arrow + string(text)
	if fits(count, whole, s.VerbatimTokens) {
		return Memory{
			Summary: whole, SafeSummary: safe, Whole: true, Values: total,
			Locators: []string{fmt.Sprintf("lines=1-%d", total)},
		}
	}

	callLine := call
	if costWithin(count, call, s.DigestTokens/2) > s.DigestTokens/2 {
		callLine = fmt.Sprintf("%s (arguments: %d bytes)", r.Tool, len(r.Arguments))
	}
	head := fmt.Sprintf("%s%stext, %s, %d bytes", callLine, arrow, plural(total, "line"), len(body))
	worstLabel := fmt.Sprintf("\nlines=%d-%d:", total, total)
	reserve := count.Count(head) + 2*count.Count(worstLabel) + max(
		count.Count(fmt.Sprintf("\n… left out: lines %d-%d; recall by lines", total, total)),
		count.Count(fmt.Sprintf("\n… left out: the rest of line 1 (bytes %d-%d); recall by lines", len(body), len(body))))
	avail := s.DigestTokens - reserve

	// Alternate between the next first line and the next last line until neither fits.
	var picks []textPick // in the order taken, so the last taken is dropped first
	headPos, tailEnd := 0, len(text)
	headN, tailN := 0, 0
	headDone, tailDone := false, false
	for !(headDone && tailDone) {
		if !headDone {
			if headN+tailN >= total {
				headDone = true
			} else {
				end := bytes.IndexByte(text[headPos:], '\n')
				if end < 0 {
					end = len(text) - headPos
				}
				line := string(text[headPos : headPos+end])
				cost := costWithin(count, line, avail) + 1
				if cost > avail {
					headDone = true
				} else {
					avail -= cost
					headN++
					picks = append(picks, textPick{line: headN, text: line})
					headPos += end + 1
				}
			}
		}
		if !tailDone {
			if headN+tailN >= total {
				tailDone = true
			} else {
				start := bytes.LastIndexByte(text[:tailEnd], '\n') + 1
				line := string(text[start:tailEnd])
				cost := costWithin(count, line, avail) + 1
				if cost > avail {
					tailDone = true
				} else {
					avail -= cost
					tailN++
					picks = append(picks, textPick{line: total - tailN + 1, text: line, tail: true})
					tailEnd = start - 1
				}
			}
		}
	}
	if headN == 0 && avail > 1 {
		end := bytes.IndexByte(text, '\n')
		if end < 0 {
			end = len(text)
		}
		if p, ok := linePrefix(count, text[:end], avail-1); ok {
			picks = append(picks, p)
		}
	}
	for {
		m := renderText(head, total, picks)
		m.SafeSummary = safe
		if count.Count(m.Summary) <= s.DigestTokens || len(picks) == 0 {
			return m
		}
		picks = picks[:len(picks)-1]
	}
}

// linePrefix quotes the longest head of line, cut at a character boundary, that counts at
// most limit tokens.
func linePrefix(count Counter, line []byte, limit int) (textPick, bool) {
	cut := func(n int) int {
		for n > 0 && n < len(line) && !utf8.RuneStart(line[n]) {
			n--
		}
		return n
	}
	lo, hi := 0, min(len(line), limit*maxBytesPerToken)
	for lo < hi {
		mid := cut((lo + hi + 1) / 2)
		if mid > lo && count.Count(string(line[:mid])) <= limit {
			lo = mid
		} else {
			hi = (lo+hi+1)/2 - 1
		}
	}
	lo = cut(lo)
	if lo == 0 {
		return textPick{}, false
	}
	return textPick{line: 1, text: string(line[:lo]), bytes: lo, of: len(line)}, true
}

// renderText writes a text digest: the head line, then each block of consecutive picked
// lines under its "lines=A-B:" label, then what was left out.
func renderText(head string, total int, picks []textPick) Memory {
	var headLines, tailLines []textPick
	var prefix *textPick
	for i := range picks {
		p := picks[i]
		switch {
		case p.bytes > 0:
			prefix = &picks[i]
		case p.tail:
			tailLines = append(tailLines, p)
		default:
			headLines = append(headLines, p)
		}
	}
	for i, j := 0, len(tailLines)-1; i < j; i, j = i+1, j-1 {
		tailLines[i], tailLines[j] = tailLines[j], tailLines[i]
	}
	var b strings.Builder
	b.WriteString(head)
	var locs []string
	values := 0
	block := func(ls []textPick) {
		if len(ls) == 0 {
			return
		}
		loc := fmt.Sprintf("lines=%d-%d", ls[0].line, ls[len(ls)-1].line)
		locs = append(locs, loc)
		b.WriteString("\n" + loc + ":")
		for _, l := range ls {
			b.WriteString("\n" + l.text)
			values++
		}
	}
	if prefix != nil {
		loc := fmt.Sprintf("bytes=0-%d", prefix.bytes)
		locs = append(locs, loc)
		b.WriteString("\n" + loc + ":\n" + prefix.text)
		values++
	}
	first, last := 1, total
	if len(headLines) > 0 && len(tailLines) > 0 && headLines[len(headLines)-1].line+1 == tailLines[0].line {
		// Nothing left between them: one block.
		headLines, tailLines = append(headLines, tailLines...), nil
	}
	block(headLines)
	block(tailLines)
	if prefix == nil && len(headLines) > 0 {
		first = headLines[len(headLines)-1].line + 1
	}
	if len(tailLines) > 0 {
		last = tailLines[0].line - 1
	}
	switch {
	case prefix != nil && last == 1:
		fmt.Fprintf(&b, "\n… left out: the rest of line 1 (bytes %d-%d); recall by lines", prefix.bytes, prefix.of)
	case prefix != nil:
		fmt.Fprintf(&b, "\n… left out: the rest of line 1 and lines 2-%d; recall by lines", last)
	case first <= last:
		fmt.Fprintf(&b, "\n… left out: lines %d-%d; recall by lines", first, last)
	}
	return Memory{Summary: b.String(), Locators: locs, Values: values}
}
