package extract

import (
	"encoding/json"
	"strings"
	"unicode"
)

// kind is the type of a JSON value.
type kind uint8

const (
	kindObject kind = iota
	kindArray
	kindString
	kindNumber
	kindBool
	kindNull
	kindOpaque // nested too deep to walk; skipped whole
)

// Limits that keep one pass over a body of a few megabytes cheap in time and memory.
const (
	maxDepth     = 64   // deeper values are skipped whole
	maxKeys      = 1000 // keys of one object kept; the rest are counted
	maxIDs       = 2000 // identifier values kept per array beyond its first rows
	maxShapeKeys = 16   // keys named per object in a safe summary
)

// node is one value of a JSON document, as far as the digest needs it. Spans index the
// source, so every value can be quoted exactly as it was sent.
type node struct {
	kind       kind
	start, end int // the value's bytes in the source
	seq        int // document order
	leaves     int // scalar leaves in the value, counted even where not kept

	keys      []string // an object's decoded keys, in source order
	kids      []*node  // an object's values, or an array's first rows
	extraKeys int      // an object's keys beyond maxKeys

	length  int     // an array's real length
	idKey   string  // an array's identifier field, picked from its first row
	ids     []*node // that field's value in the rows after the first ones
	idRows  []int   // the row index of each of ids
	tailSeq int     // document order just after an array's rows
}

// parser walks a document that json.Valid accepted, in one pass.
type parser struct {
	b        []byte
	i        int
	seq      int
	keepRows int // rows of each array walked in full
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) *node {
	p.ws()
	n := &node{start: p.i, seq: p.seq}
	p.seq++
	if depth > maxDepth {
		n.kind = kindOpaque
		n.leaves = p.skip()
		n.end = p.i
		return n
	}
	switch c := p.b[p.i]; c {
	case '{':
		p.object(n, depth)
	case '[':
		p.array(n, depth)
	case '"':
		n.kind = kindString
		p.str()
	case 't', 'f':
		n.kind = kindBool
		p.literal()
	case 'n':
		n.kind = kindNull
		p.literal()
	default:
		n.kind = kindNumber
		p.literal()
	}
	n.end = p.i
	if n.kind >= kindString {
		n.leaves = 1
	}
	return n
}

func (p *parser) object(n *node, depth int) {
	n.kind = kindObject
	p.i++
	p.ws()
	if p.b[p.i] == '}' {
		p.i++
		return
	}
	for {
		p.ws()
		ks := p.i
		p.str()
		rawKey := p.b[ks:p.i]
		p.ws()
		p.i++ // ':'
		if len(n.kids) < maxKeys {
			kid := p.value(depth + 1)
			n.keys = append(n.keys, decodeKey(rawKey))
			n.kids = append(n.kids, kid)
			n.leaves += kid.leaves
		} else {
			p.ws()
			n.leaves += p.skip()
			n.extraKeys++
		}
		p.ws()
		if p.b[p.i] == ',' {
			p.i++
			continue
		}
		p.i++ // '}'
		return
	}
}

func (p *parser) array(n *node, depth int) {
	n.kind = kindArray
	p.i++
	p.ws()
	if p.b[p.i] == ']' {
		p.i++
		n.tailSeq = p.seq
		p.seq++
		return
	}
	for {
		p.ws()
		switch {
		case n.length < p.keepRows:
			kid := p.value(depth + 1)
			n.kids = append(n.kids, kid)
			n.leaves += kid.leaves
			if n.length == 0 && kid.kind == kindObject {
				n.idKey = identifierKey(kid)
			}
		case n.idKey != "" && p.b[p.i] == '{' && len(n.ids) < maxIDs:
			leaves, id := p.pick(n.idKey)
			n.leaves += leaves
			if id != nil {
				n.ids = append(n.ids, id)
				n.idRows = append(n.idRows, n.length)
			}
		default:
			n.leaves += p.skip()
		}
		n.length++
		p.ws()
		if p.b[p.i] == ',' {
			p.i++
			continue
		}
		p.i++ // ']'
		n.tailSeq = p.seq
		p.seq++
		return
	}
}

// pick skips one object, returning its leaf count and the scalar value of its field key.
func (p *parser) pick(key string) (int, *node) {
	var found *node
	leaves := 0
	p.i++ // '{'
	p.ws()
	if p.b[p.i] == '}' {
		p.i++
		return 0, nil
	}
	for {
		p.ws()
		ks := p.i
		p.str()
		rawKey := p.b[ks:p.i]
		p.ws()
		p.i++ // ':'
		p.ws()
		c := p.b[p.i]
		if found == nil && c != '{' && c != '[' && decodeKey(rawKey) == key {
			found = &node{start: p.i, kind: scalarKind(c)}
			p.literalOrString()
			found.end = p.i
			found.leaves = 1
			leaves++
		} else {
			leaves += p.skip()
		}
		p.ws()
		if p.b[p.i] == ',' {
			p.i++
			continue
		}
		p.i++ // '}'
		return leaves, found
	}
}

// skip passes over one value without keeping it and returns its scalar leaf count.
func (p *parser) skip() int {
	leaves, depth := 0, 0
	for {
		p.ws()
		switch p.b[p.i] {
		case '{', '[':
			depth++
			p.i++
		case '}', ']':
			depth--
			p.i++
		case ',', ':':
			p.i++
		case '"':
			p.str()
			p.ws()
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				leaves++
			}
		default:
			p.literal()
			leaves++
		}
		if depth == 0 {
			return leaves
		}
	}
}

func (p *parser) str() {
	p.i++ // opening quote
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\\':
			p.i += 2
		case '"':
			p.i++
			return
		default:
			p.i++
		}
	}
}

func (p *parser) literal() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ',', ']', '}', ' ', '\t', '\r', '\n':
			return
		}
		p.i++
	}
}

func (p *parser) literalOrString() {
	if p.b[p.i] == '"' {
		p.str()
		return
	}
	p.literal()
}

func scalarKind(c byte) kind {
	switch c {
	case '"':
		return kindString
	case 't', 'f':
		return kindBool
	case 'n':
		return kindNull
	}
	return kindNumber
}

// decodeKey returns an object key's text from its quoted source.
func decodeKey(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	for _, c := range inner {
		if c == '\\' {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				return s
			}
			break
		}
	}
	return string(inner)
}

// pointerToken escapes a key as one JSON Pointer reference token (RFC 6901).
func pointerToken(key string) string {
	if strings.ContainsAny(key, "~/") {
		key = strings.ReplaceAll(key, "~", "~0")
		key = strings.ReplaceAll(key, "/", "~1")
	}
	return key
}

// fieldClass ranks a scalar field by how likely a later turn needs it.
type fieldClass int

const (
	classIdentifier fieldClass = iota // ids, names, statuses, paths, URLs
	classAmount                       // amounts, counts, dates and times
	classOther
)

var identifierWords = map[string]bool{
	"id": true, "ids": true, "uuid": true, "guid": true, "key": true, "ref": true, "reference": true,
	"number": true, "no": true, "code": true, "sku": true, "slug": true, "name": true,
	"title": true, "status": true, "state": true, "path": true, "file": true, "filename": true,
	"url": true, "uri": true, "href": true, "link": true, "email": true, "handle": true,
	"username": true, "login": true, "host": true, "hostname": true, "domain": true,
}

var amountWords = map[string]bool{
	"price": true, "amount": true, "total": true, "subtotal": true, "cost": true, "fee": true,
	"tax": true, "balance": true, "quantity": true, "qty": true, "count": true, "currency": true,
	"date": true, "time": true, "at": true, "created": true, "updated": true, "timestamp": true,
	"ts": true, "expires": true, "deadline": true, "due": true, "start": true, "end": true,
	"departure": true, "arrival": true, "duration": true, "size": true, "rate": true,
	"score": true, "version": true,
}

// rowIDRank orders identifier words for choosing the field that names an array's rows.
var rowIDRank = map[string]int{
	"id": 0, "uuid": 0, "guid": 0,
	"key": 1, "ref": 1, "reference": 1, "number": 1, "no": 1, "code": 1, "sku": 1, "slug": 1,
	"name": 2, "title": 2, "path": 2, "file": 2, "filename": 2, "url": 2, "uri": 2,
	"href": 2, "email": 2, "handle": 2, "username": 2, "login": 2, "host": 2, "hostname": 2,
}

// lastWord returns a key's last word, lower case: "booking_id", "bookingId" and "BookingID"
// all end in "id"; "HTTPStatus" ends in "status".
func lastWord(key string) string {
	if i := strings.LastIndexAny(key, "_-. "); i >= 0 {
		key = key[i+1:]
	}
	r := []rune(key)
	start := 0
	for j := len(r) - 1; j > 0; j-- {
		if unicode.IsUpper(r[j]) && unicode.IsLower(r[j-1]) {
			start = j
			break
		}
		if unicode.IsUpper(r[j]) && unicode.IsUpper(r[j-1]) && j+1 < len(r) && unicode.IsLower(r[j+1]) {
			start = j
			break
		}
	}
	return strings.ToLower(string(r[start:]))
}

// classify ranks a scalar field by its key, then by its value: a string mixing letters and
// digits, or a URL, reads as an identifier whatever its key.
func classify(key string, n *node, src []byte) fieldClass {
	w := lastWord(key)
	switch {
	case identifierWords[w] || identifierWords[strings.ToLower(key)]:
		return classIdentifier
	case amountWords[w] || amountWords[strings.ToLower(key)]:
		return classAmount
	}
	if n.kind == kindString && n.end-n.start <= 82 && looksLikeIdentifier(src[n.start+1:n.end-1]) {
		return classIdentifier
	}
	return classOther
}

// looksLikeIdentifier reports whether a short string value reads as an id or a URL: no
// spaces, and letters mixed with digits, or a scheme.
func looksLikeIdentifier(s []byte) bool {
	letters, digits := false, false
	for _, c := range s {
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			return false
		case c >= '0' && c <= '9':
			digits = true
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			letters = true
		}
	}
	return (letters && digits) || strings.Contains(string(s), "://")
}

// identifierKey picks the field that names an object's rows: the best-ranked identifier
// word among its scalar fields, the first of equals.
func identifierKey(obj *node) string {
	best, bestRank := "", 99
	for i, k := range obj.keys {
		kid := obj.kids[i]
		if kid.kind != kindString && kid.kind != kindNumber {
			continue
		}
		rank, ok := rowIDRank[lastWord(k)]
		if !ok {
			continue
		}
		if rank < bestRank {
			best, bestRank = k, rank
		}
	}
	return best
}
