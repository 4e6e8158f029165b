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
	t := &Tokenizer{codec: codec, name: encoding, cache: map[string]int{}}
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

// chunkCacheSize bounds the cached chunk counts of one encoding; the cache starts over when
// it is full.
const chunkCacheSize = 200_000

func (t *Tokenizer) countChunk(chunk string) int {
	t.mu.Lock()
	n, ok := t.cache[chunk]
	t.mu.Unlock()
	if ok {
		return n
	}
	ids, _, err := t.codec.Encode(chunk)
	n = len(ids)
	if err != nil {
		// Encode fails only on invalid UTF-8; count bytes rather than under-count.
		n = len(chunk)
	}
	t.mu.Lock()
	if len(t.cache) >= chunkCacheSize {
		t.cache = map[string]int{}
	}
	// A clone, so that the cache never pins the larger text the chunk was cut from.
	t.cache[strings.Clone(chunk)] = n
	t.mu.Unlock()
	return n
}

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
	n := tokensPerReply
	for _, m := range msgs {
		n += MessageTokens(c, m.Role, m.Content, m.Name)
	}
	return n
}

// ReplyPriming is the fixed cost of a request beyond its messages.
const ReplyPriming = tokensPerReply
