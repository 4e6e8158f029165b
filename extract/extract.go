// Package extract is the structural extractor of DESIGN §7: it turns one recorded tool result
// into a compact, model-facing memory that quotes values exactly, and a user message into the
// values a later turn may need. It is pure and deterministic: no I/O, no clock, and the same
// input gives the same output byte for byte.
package extract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ctxgraph/ctxgraph/model"
)

// Name and Version identify the extractor in a memory's confidenceSource.
const (
	Name    = "structural"
	Version = 1
)

// Source returns the extractor's confidenceSource, "extractor:structural/1".
func Source() string { return fmt.Sprintf("extractor:%s/%d", Name, Version) }

// Counter counts tokens with a real tokenizer; it is model.TokenCounter.
type Counter = model.TokenCounter

// Settings are a policy's promotion token settings.
type Settings struct {
	VerbatimTokens int // a result whose verbatim line fits this many tokens is quoted whole
	DigestTokens   int // a larger result's digest stays within this many tokens
}

// Result is one recorded tool outcome.
type Result struct {
	Tool      string
	Arguments []byte // the call's arguments as sent (JSON, possibly empty)
	Body      []byte // the raw result: JSON or plain text (may be empty)
}

// Memory is what Derive makes of a result.
//
// Summary always starts with the call, "<tool> <arguments as compact JSON>", then " → " and
// either the whole body (compact JSON, or the text without its final newline) or a digest
// (see Derive). Locators hold one provenance locator per quoted value, deduplicated, in the
// order the values appear: a JSON Pointer (RFC 6901) such as "/flights/0/id", a line range
// "lines=A-B" (1-based, inclusive) or a byte range "bytes=START-END" (END exclusive). When
// the whole body is quoted, Whole is true and Locators is [""] (the JSON Pointer of the whole
// document) for JSON or ["lines=1-N"] for text. An empty body is Whole with no locator, since
// there is nothing to quote or recall; a body that is not UTF-8 is described, never quoted.
type Memory struct {
	Summary     string   // the model-facing text: the call and the values, quoted exactly
	SafeSummary string   // structure only: argument keys, body keys, counts, types, sizes
	Locators    []string // one per quoted value, deduplicated, in order
	Whole       bool     // the whole body is quoted verbatim
	Values      int      // how many values it quotes: scalar JSON leaves, or text lines
}

// maxBytesPerToken bounds how many bytes one token is assumed to cover at most. It only lets
// Derive skip tokenizing text that cannot fit (a multi-megabyte body against a budget of a
// few hundred tokens); text denser than this is treated as not fitting.
const maxBytesPerToken = 32

// arrow separates the call from what it returned.
const arrow = " → "

// Derive makes the structural memory of one tool result under a policy's settings. A result
// whose verbatim summary counts at most s.VerbatimTokens is quoted whole; a larger one is
// digested within s.DigestTokens (when that leaves room for the call and the body's shape).
//
// A JSON digest is the call line "<call> → JSON object, N bytes:" (for an array:
// "JSON array of N rows {keys}, N bytes:") followed by one item a line, in document order:
//
//	/pointer="value"                         a scalar field, quoted as in the body
//	/pointer: 200 rows {id,name,price}       an array's length and the keys of its rows
//	/pointer/0={"id":"a","price":3}          one row, whole and compact
//	/pointer/8..57/id="h","i",…              the id field of rows 8 to 57 that have one
//	… left out: 142 rows, 12 fields; recall by pointer
//
// Fields are chosen by priority: array shapes, identifier-like fields (ids, names, statuses,
// paths, URLs), first rows, amounts and times, further rows, other fields by depth, then the
// ids of the remaining rows; a row or field too large to fit is left out, never cut. A text
// digest is "<call> → text, N lines, N bytes" followed by labelled blocks of its first and
// last lines ("lines=1-3:" then the lines, alternately taken from the head and the tail) and
// a "… left out: lines 4-409; recall by lines" line. When not even the first line fits, the
// largest head of it that does is quoted under "bytes=0-N:".
func Derive(r Result, s Settings, count Counter) Memory {
	call := r.Tool + " " + compactArguments(r.Arguments)
	body := r.Body
	switch {
	case len(body) == 0:
		return Memory{
			Summary:     call + arrow + "(empty)",
			SafeSummary: safeCall(r) + " result: empty",
			Whole:       true,
		}
	case isJSON(body):
		m := deriveJSON(r, call, s, count)
		var text string
		if !m.Whole && bytes.TrimLeft(body, " \t\r\n")[0] == '"' && json.Unmarshal(body, &text) == nil {
			// A JSON string too long to quote is a text: it is digested by lines, and its
			// locators count the lines of the string's value (as recall reads them).
			r.Body = []byte(text)
			return deriveText(r, call, s, count)
		}
		return m
	case !utf8.Valid(body):
		return Memory{
			Summary:     fmt.Sprintf("%s%sbinary, %d bytes (not quoted)", call, arrow, len(body)),
			SafeSummary: fmt.Sprintf("%s result: binary, %d bytes", safeCall(r), len(body)),
		}
	default:
		return deriveText(r, call, s, count)
	}
}

// isJSON reports whether body is one valid JSON document.
func isJSON(body []byte) bool {
	t := bytes.TrimLeft(body, " \t\r\n")
	if len(t) == 0 {
		return false
	}
	switch c := t[0]; {
	case c == '{', c == '[', c == '"', c == '-', c == 't', c == 'f', c == 'n', c >= '0' && c <= '9':
		return json.Valid(body)
	}
	return false
}

// compactArguments renders a call's arguments: compact JSON in the sender's key order, the
// bytes as given when they are not JSON, "{}" when there are none.
func compactArguments(args []byte) string {
	if len(bytes.TrimSpace(args)) == 0 {
		return "{}"
	}
	if json.Valid(args) {
		var b bytes.Buffer
		if json.Compact(&b, args) == nil {
			return b.String()
		}
	}
	return string(args)
}

// safeCall names the call without any value: the tool and its argument keys.
func safeCall(r Result) string {
	args := bytes.TrimSpace(r.Arguments)
	if len(args) == 0 || args[0] != '{' || !json.Valid(args) {
		return r.Tool
	}
	p := parser{b: args, keepRows: 1}
	root := p.value(0)
	if len(root.keys) == 0 {
		return r.Tool
	}
	keys := root.keys
	more := ""
	if len(keys) > maxShapeKeys {
		more = fmt.Sprintf(", +%d keys", len(keys)-maxShapeKeys)
		keys = keys[:maxShapeKeys]
	}
	return r.Tool + "(" + strings.Join(keys, ", ") + more + ")"
}

// fits reports whether text counts at most limit tokens, without tokenizing text that is
// too long to fit anyway.
func fits(count Counter, text string, limit int) bool {
	if limit <= 0 || len(text) > limit*maxBytesPerToken {
		return false
	}
	return count.Count(text) <= limit
}

// costWithin returns text's token count, or limit+1 when it is too long to fit in limit.
func costWithin(count Counter, text string, limit int) int {
	if limit < 0 {
		limit = 0
	}
	if len(text) > limit*maxBytesPerToken {
		return limit + 1
	}
	return count.Count(text)
}

// dedupe drops repeated locators, keeping the first of each.
func dedupe(locs []string) []string {
	seen := make(map[string]bool, len(locs))
	out := locs[:0]
	for _, l := range locs {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}
