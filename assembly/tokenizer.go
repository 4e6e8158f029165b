// Package assembly builds the context of one model call: it resolves a policy version, runs
// the one lineage traversal, applies the policies, fits the budget, serialises provider-ready
// messages, counts their tokens and records the assembly.
package assembly

import (
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"

	"github.com/ctxgraph/ctxgraph/model"
)

// Tokenizer counts tokens with a real BPE vocabulary that ships inside the binary
// (o200k_base by default; cl100k_base for the models that use it). Nothing is downloaded.
type Tokenizer struct {
	codec tokenizer.Codec
	name  string

	mu    sync.Mutex
	cache map[string]int
	// cacheBytes is the length of the cached chunks in all.
	cacheBytes int

	// pieces caches the counts of the pieces o200kPieceEnd cuts ASCII chunks into.
	piecesMu sync.RWMutex
	pieces   map[string]int
}

var _ model.TokenCounter = (*Tokenizer)(nil)

var (
	codecsMu sync.Mutex
	codecs   = map[tokenizer.Encoding]*Tokenizer{}
)

// NewTokenizer returns the tokenizer of an encoding ("o200k_base" or "cl100k_base").
func NewTokenizer(encoding string) (*Tokenizer, error) {
	enc := tokenizer.Encoding(encoding)
	codecsMu.Lock()
	defer codecsMu.Unlock()
	if t, ok := codecs[enc]; ok {
		return t, nil
	}
	codec, err := tokenizer.Get(enc)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", encoding, err)
	}
	t := &Tokenizer{codec: codec, name: encoding, cache: map[string]int{}, pieces: map[string]int{}}
	codecs[enc] = t
	return t, nil
}

// MustTokenizer is NewTokenizer for the encodings compiled into the binary.
func MustTokenizer(encoding string) *Tokenizer {
	t, err := NewTokenizer(encoding)
	if err != nil {
		panic(err)
	}
	return t
}

// EncodingForModel maps a model name to its encoding: o200k_base unless the model is one
// of the cl100k_base generation.
func EncodingForModel(modelName string) string {
	m := strings.ToLower(modelName)
	for _, prefix := range []string{"gpt-4-", "gpt-3.5", "text-embedding-3", "text-embedding-ada"} {
		if strings.HasPrefix(m, prefix) {
			return "cl100k_base"
		}
	}
	if m == "gpt-4" {
		return "cl100k_base"
	}
	return "o200k_base"
}

// Name is the encoding's name.
func (t *Tokenizer) Name() string { return t.name }

// Count returns the number of tokens of text. The text is cut into chunks after each newline
// that the encoding's split pattern always ends a piece at (one followed by a character that
// is neither white space nor "/"); BPE never merges across pieces, so the count is the sum of
// the chunks' counts, and each chunk's count is cached: an assembly re-counts only the lines
// that changed since the last one.
func (t *Tokenizer) Count(text string) int {
	n := 0
	for text != "" {
		i := chunkEnd(text)
		n += t.countChunk(text[:i])
		text = text[i:]
	}
	return n
}

// chunkEnd is the length of text's first chunk.
func chunkEnd(text string) int {
	for i := 0; ; {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			return len(text)
		}
		i += j + 1
		if i == len(text) {
			return i
		}
		if r, _ := utf8.DecodeRuneInString(text[i:]); !unicode.IsSpace(r) && r != '/' {
			return i
		}
	}
}

// chunkCacheSize and chunkCacheBytes bound the cached chunk counts of one encoding, in
// entries and in the chunks' bytes (a tool payload's line can be long); the cache starts
// over when either is reached.
const (
	chunkCacheSize  = 200_000
	chunkCacheBytes = 32 << 20
)

func (t *Tokenizer) countChunk(chunk string) int {
	t.mu.Lock()
	n, ok := t.cache[chunk]
	t.mu.Unlock()
	if ok {
		return n
	}
	if t.name == "o200k_base" && isPlainASCII(chunk) {
		n = t.countASCII(chunk)
	} else {
		var err error
		if n, err = t.codec.Count(chunk); err != nil {
			// Count fails only on invalid UTF-8; count bytes rather than under-count.
			n = len(chunk)
		}
	}
	t.mu.Lock()
	if len(t.cache) >= chunkCacheSize || t.cacheBytes+len(chunk) > chunkCacheBytes {
		t.cache, t.cacheBytes = map[string]int{}, 0
	}
	if len(chunk) <= chunkCacheBytes/64 {
		// A clone, so that the cache never pins the larger text the chunk was cut from. A
		// chunk too long to be worth keeping is counted again when it comes back.
		t.cache[strings.Clone(chunk)] = n
		t.cacheBytes += len(chunk)
	}
	t.mu.Unlock()
	return n
}

// countASCII counts an ASCII chunk in o200k_base piece by piece: the pieces are cut as the
// encoding's split pattern cuts them (o200kPieceEnd) and BPE never merges across pieces, so
// the count is the sum of the pieces' counts, and pieces repeat (numbers, words,
// punctuation) far more than lines do. The library's general pattern matcher is slow on
// long tool payloads, and counting with it was most of the CPU of recording a tool result.
func (t *Tokenizer) countASCII(chunk string) int {
	n := 0
	var misses []string
	t.piecesMu.RLock()
	for i := 0; i < len(chunk); {
		j := o200kPieceEnd(chunk, i)
		if c, ok := t.pieces[chunk[i:j]]; ok {
			n += c
		} else {
			misses = append(misses, chunk[i:j])
		}
		i = j
	}
	t.piecesMu.RUnlock()
	if len(misses) == 0 {
		return n
	}
	// A new piece that recurs in the chunk is counted by the codec once.
	counted := make(map[string]int, len(misses))
	for _, piece := range misses {
		c, ok := counted[piece]
		if !ok {
			// A piece on its own splits into itself, so the codec counts exactly its tokens.
			var err error
			if c, err = t.codec.Count(piece); err != nil {
				c = len(piece)
			}
			counted[piece] = c
		}
		n += c
	}
	t.piecesMu.Lock()
	if len(t.pieces)+len(counted) > pieceCacheSize {
		t.pieces = map[string]int{}
	}
	for piece, c := range counted {
		t.pieces[strings.Clone(piece)] = c
	}
	t.piecesMu.Unlock()
	return n
}

// pieceCacheSize bounds the cached piece counts; the cache starts over when it is full.
const pieceCacheSize = 100_000

// isPlainASCII reports whether s holds only printable ASCII and white space: the texts
// o200kPieceEnd cuts. (Other control characters are left to the library, which drops DEL,
// for one, where a byte-level BPE would count it.)
func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c > '~' || c < ' ' && !isSpace(c) {
			return false
		}
	}
	return true
}

// o200kPieceEnd returns the end of the piece that starts at s[i], for plain ASCII s
// (isPlainASCII), as o200k_base's split pattern cuts it. Its alternatives, tried in order,
// are
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	\p{N}{1,3}
//	 ?[^\s\p{L}\p{N}]+[\r\n/]*
//	\s*[\r\n]+
//	\s+(?!\S)
//	\s+
//
// In ASCII the first two together are: an optional character that is not CR, LF, a letter or
// a digit, then a run of capitals, then a run of small letters, at least one letter in all,
// then an optional contraction.
func o200kPieceEnd(s string, i int) int {
	c := s[i]
	// The letter alternatives.
	j := i
	if c != '\r' && c != '\n' && !isLetter(c) && !isDigit(c) {
		j++
	}
	if j < len(s) && isLetter(s[j]) {
		for j < len(s) && 'A' <= s[j] && s[j] <= 'Z' {
			j++
		}
		for j < len(s) && 'a' <= s[j] && s[j] <= 'z' {
			j++
		}
		return j + contraction(s[j:])
	}
	switch {
	case isDigit(c):
		j = i + 1
		for j < len(s) && j < i+3 && isDigit(s[j]) {
			j++
		}
		return j
	case c == ' ' && i+1 < len(s) && isPunct(s[i+1]), isPunct(c):
		j = i + 1
		for j < len(s) && isPunct(s[j]) {
			j++
		}
		for j < len(s) && (s[j] == '\r' || s[j] == '\n' || s[j] == '/') {
			j++
		}
		return j
	}
	// c is white space: the run of it, and the last CR or LF in the run.
	j, lastBreak := i, -1
	for j < len(s) && isSpace(s[j]) {
		if s[j] == '\r' || s[j] == '\n' {
			lastBreak = j
		}
		j++
	}
	switch {
	case lastBreak >= 0:
		return lastBreak + 1
	case j == len(s) || j-i == 1:
		return j
	default:
		// Leave the last space to start the next piece.
		return j - 1
	}
}

// contraction is the length of the contraction s starts with ('s, 't, 're, 've, 'm, 'll or 'd,
// in either case), 0 for none.
func contraction(s string) int {
	if len(s) < 2 || s[0] != '\'' {
		return 0
	}
	switch s[1] | 0x20 {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if len(s) >= 3 && s[2]|0x20 == 'e' {
			return 3
		}
	case 'l':
		if len(s) >= 3 && s[2]|0x20 == 'l' {
			return 3
		}
	}
	return 0
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

// isSpace is \s in ASCII: tab, LF, VT, FF, CR and space.
func isSpace(c byte) bool { return c == ' ' || '\t' <= c && c <= '\r' }

// isPunct is [^\s\p{L}\p{N}] in ASCII: punctuation and symbols.
func isPunct(c byte) bool { return !isSpace(c) && !isLetter(c) && !isDigit(c) }

// Per-message accounting of chat formats: every message costs its role, content and name
// plus a fixed overhead, and the reply is primed with a few more tokens.
const (
	tokensPerMessage = 3
	tokensPerName    = 1
	tokensPerReply   = 3
)

// MessageTokens counts one chat message the way providers bill it.
func MessageTokens(c model.TokenCounter, role, content, name string) int {
	n := tokensPerMessage + c.Count(role) + c.Count(content)
	if name != "" {
		n += c.Count(name) + tokensPerName
	}
	return n
}

// ChatTokens counts a whole request.
func ChatTokens(c model.TokenCounter, msgs []model.ChatMessage) int {
	return Sections(c, msgs, false).Total()
}

// chatMessageTokens counts one message of a request, its tool calls included.
func chatMessageTokens(c model.TokenCounter, m model.ChatMessage) int {
	n := MessageTokens(c, m.Role, m.Content, m.Name)
	for _, call := range m.ToolCalls {
		n += ToolCallTokens(c, call)
	}
	if m.ToolCallID != "" {
		n += c.Count(m.ToolCallID)
	}
	return n
}

// Sections counts the tokens of a request by section; instructed says that its first
// message is the lead instructions.
func Sections(c model.TokenCounter, msgs []model.ChatMessage, instructed bool) model.TokenSections {
	s := model.TokenSections{Reply: tokensPerReply}
	for i, m := range msgs {
		n := chatMessageTokens(c, m)
		switch {
		case i == 0 && instructed:
			s.Instructions += n
		case m.Role == "system":
			s.Context += n
		case m.Role == "tool" || len(m.ToolCalls) > 0:
			s.ToolRounds += n
		default:
			s.Messages += n
		}
	}
	return s
}

// ToolCallTokens counts one call of a tool round: its id, tool name and arguments, with the
// per-message overhead for the structure around them.
func ToolCallTokens(c model.TokenCounter, call model.ChatToolCall) int {
	return tokensPerMessage + c.Count(call.ID) + c.Count(call.Name) + c.Count(call.Arguments)
}

// ReplyPriming is the fixed cost of a request beyond its messages.
const ReplyPriming = tokensPerReply
