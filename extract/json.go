package extract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Candidate priorities of a JSON digest, most wanted first.
const (
	prioShape      = 1 // an array's length and row keys
	prioIdentifier = 2 // identifier-like fields
	prioFirstRow   = 3 // the first row of each array
	prioAmount     = 4 // amounts, counts, dates, times
	prioRow        = 5 // further rows, round robin over arrays
	prioOther      = 6 // other fields, shallowest first
	prioRowID      = 7 // the identifier of each remaining row, round robin over arrays
)

// candidate is one line (or, for row ids, one value of a line) a digest may include.
type candidate struct {
	rank   [3]int // priority, then order within it
	order  int    // position in document order
	sub    int    // order among a list's values
	text   string // the line, or a row id's quoted value
	ptr    string // the quoted value's pointer; "" for a shape line
	leaves int    // scalar leaves quoted
	quotes bool   // quotes a value (ptr is a locator)
	leaf   bool   // a scalar field (counted as left out when not chosen)
	table  *table // the array of a row or row id
	row    bool   // a whole row of table
	list   bool   // a row id of table
	cost   int
}

// table is an array the digest describes.
type table struct {
	ptr        string
	n          *node
	decomposed int          // first rows too large to quote whole, digested field by field
	hasIDs     bool         // its rows' ids are candidates
	whole      map[int]bool // rows chosen whole
}

// jsonDigest collects the candidates of one document.
type jsonDigest struct {
	src    []byte
	count  Counter
	rowCap int // tokens a row may cost to be quoted whole
	cands  []*candidate
	tables []*table
	extra  int // fields never walked (objects past maxKeys)
}

func deriveJSON(r Result, call string, s Settings, count Counter) Memory {
	body := r.Body
	keep := s.DigestTokens / 16
	if keep < 2 {
		keep = 2
	}
	if keep > 200 {
		keep = 200
	}
	p := parser{b: body, keepRows: keep}
	root := p.value(0)
	safe := fmt.Sprintf("%s result: %s; %d bytes JSON", safeCall(r), shape(root, body, 0), len(body))

	if len(body) <= 2*s.VerbatimTokens*maxBytesPerToken {
		var b bytes.Buffer
		if json.Compact(&b, body) == nil {
			whole := call + arrow + b.String()
			if fits(count, whole, s.VerbatimTokens) {
				return Memory{Summary: whole, SafeSummary: safe, Locators: []string{""}, Whole: true, Values: root.leaves}
			}
		}
	}

	d := &jsonDigest{src: body, count: count, rowCap: s.DigestTokens / 2}
	callLine := call
	if costWithin(count, call, s.DigestTokens/2) > s.DigestTokens/2 {
		callLine = fmt.Sprintf("%s (arguments: %d bytes)", r.Tool, len(r.Arguments))
	}
	var head string
	switch root.kind {
	case kindObject:
		head = fmt.Sprintf("%s%sJSON object, %d bytes:", callLine, arrow, len(body))
		d.object(root, "", 0)
	case kindArray:
		t := d.array(root, "", 0, false)
		head = fmt.Sprintf("%s%sJSON array of %s, %d bytes:", callLine, arrow, d.tableShape(t), len(body))
	default:
		head = fmt.Sprintf("%s%sJSON %s, %d bytes (not quoted)", callLine, arrow, shape(root, body, 0), len(body))
	}
	return d.choose(head, s.DigestTokens, safe)
}

// object adds the candidates of an object's fields.
func (d *jsonDigest) object(n *node, ptr string, depth int) {
	d.extra += n.extraKeys
	for i, k := range n.keys {
		kid := n.kids[i]
		kp := ptr + "/" + pointerToken(k)
		switch kid.kind {
		case kindObject:
			d.object(kid, kp, depth+1)
		case kindArray:
			d.array(kid, kp, depth+1, true)
		case kindOpaque:
			d.extra += kid.leaves
		default:
			d.leaf(kid, k, kp, depth+1)
		}
	}
}

// leaf adds one scalar field.
func (d *jsonDigest) leaf(n *node, key, ptr string, depth int) {
	c := &candidate{
		order: n.seq, text: ptr + "=" + string(d.src[n.start:n.end]), ptr: ptr,
		leaves: 1, quotes: true, leaf: true,
	}
	switch classify(key, n, d.src) {
	case classIdentifier:
		c.rank = [3]int{prioIdentifier, n.seq}
	case classAmount:
		c.rank = [3]int{prioAmount, n.seq}
	default:
		c.rank = [3]int{prioOther, depth, n.seq}
	}
	d.cands = append(d.cands, c)
}

// array adds an array's shape line (unless it is the root's, which heads the digest), its
// first rows and the identifiers of the rest.
func (d *jsonDigest) array(n *node, ptr string, depth int, withShape bool) *table {
	t := &table{ptr: ptr, n: n}
	d.tables = append(d.tables, t)
	if withShape {
		d.cands = append(d.cands, &candidate{
			rank: [3]int{prioShape, n.seq}, order: n.seq, text: ptr + ": " + d.tableShape(t),
		})
	}
	type rowRef struct {
		i int
		n *node
	}
	var quotable []rowRef
	for i, kid := range n.kids {
		rp := ptr + "/" + strconv.Itoa(i)
		rank := [3]int{prioRow, i, kid.seq}
		if i == 0 {
			rank = [3]int{prioFirstRow, kid.seq}
		}
		c := &candidate{rank: rank, order: kid.seq, sub: i, ptr: rp, leaves: kid.leaves, quotes: true, table: t, row: true}
		raw := d.src[kid.start:kid.end]
		switch {
		case kid.kind == kindOpaque:
			continue
		case kid.kind != kindObject && kid.kind != kindArray:
			if len(raw) > d.rowCap*maxBytesPerToken {
				continue
			}
			c.text = rp + "=" + string(raw)
		default:
			if len(raw) <= d.rowCap*maxBytesPerToken {
				var b bytes.Buffer
				if json.Compact(&b, raw) == nil {
					c.text = rp + "=" + b.String()
					c.cost = costWithin(d.count, c.text, d.rowCap) + 1
				}
			}
			if c.text == "" || c.cost > d.rowCap+1 {
				// Too large to quote whole: digest the row field by field instead.
				t.decomposed++
				if kid.kind == kindObject {
					d.object(kid, rp, depth+1)
				} else {
					d.array(kid, rp, depth+1, true)
				}
				continue
			}
		}
		d.cands = append(d.cands, c)
		if i > 0 {
			quotable = append(quotable, rowRef{i, kid})
		}
	}
	for _, r := range quotable {
		// A first row not chosen whole is still named by its id.
		if id := field(r.n, n.idKey); id != nil {
			d.rowID(t, r.i, id)
		}
	}
	for j, id := range n.ids {
		d.rowID(t, n.idRows[j], id)
	}
	return t
}

// rowID adds the identifier of one row of t.
func (d *jsonDigest) rowID(t *table, row int, id *node) {
	d.cands = append(d.cands, &candidate{
		rank: [3]int{prioRowID, row, t.n.seq}, order: t.n.tailSeq, sub: row,
		text:   string(d.src[id.start:id.end]),
		ptr:    t.ptr + "/" + strconv.Itoa(row) + "/" + pointerToken(t.n.idKey),
		leaves: 1, quotes: true, table: t, list: true,
	})
	t.hasIDs = true
}

// field returns an object's scalar field key, or nil.
func field(obj *node, key string) *node {
	if key == "" || obj.kind != kindObject {
		return nil
	}
	for i, k := range obj.keys {
		if k == key {
			if kid := obj.kids[i]; kid.kind != kindObject && kid.kind != kindArray && kid.kind != kindOpaque {
				return kid
			}
			return nil
		}
	}
	return nil
}

// tableShape is an array's length and the keys of its rows: "200 rows {id,name}" for
// objects, "40 items" otherwise.
func (d *jsonDigest) tableShape(t *table) string {
	n := t.n
	keys, seen := []string(nil), map[string]bool{}
	objects := len(n.kids) > 0
	for _, kid := range n.kids {
		if kid.kind != kindObject {
			objects = false
			break
		}
		for _, k := range kid.keys {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	if !objects {
		return plural(n.length, "item")
	}
	more := ""
	if len(keys) > 12 {
		more = fmt.Sprintf(",+%d", len(keys)-12)
		keys = keys[:12]
	}
	return fmt.Sprintf("%s {%s%s}", plural(n.length, "row"), strings.Join(keys, ","), more)
}

// choose fills the budget with candidates in priority order, then renders them in document
// order, dropping the least wanted until the exact count fits.
func (d *jsonDigest) choose(head string, budget int, safe string) Memory {
	sort.SliceStable(d.cands, func(i, j int) bool {
		a, b := d.cands[i].rank, d.cands[j].rank
		for k := range a {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
		return false
	})
	trailerCost := d.count.Count("\n… left out: 10000000 rows, 10000000 fields; recall by pointer")
	avail := budget - d.count.Count(head) - trailerCost
	listOpen := map[*table]bool{} // a row-id list whose first value was chosen
	listShut := map[*table]bool{} // a row-id list that stopped at a value that did not fit
	// Further rows leave a quarter of the room to the ids of the rows not quoted whole.
	reserve := 0
	for _, t := range d.tables {
		if t.hasIDs {
			reserve = avail / 4
			break
		}
	}
	var chosen []*candidate
	failures := 0
	for _, c := range d.cands {
		if avail <= 0 || failures > 64 {
			break
		}
		room := avail
		if c.rank[0] == prioRow {
			room -= reserve
		}
		cost := c.cost
		if c.list {
			if listShut[c.table] || c.table.whole[c.sub] {
				continue
			}
			cost = costWithin(d.count, c.text+",", avail)
			if !listOpen[c.table] {
				cost += d.count.Count(c.table.ptr+"/"+strconv.Itoa(c.sub)+".."+strconv.Itoa(c.table.n.length-1)+"/"+pointerToken(c.table.n.idKey)+"=") + 1
			}
		} else if cost == 0 {
			cost = costWithin(d.count, c.text, avail) + 1
		}
		if cost > room {
			failures++
			if c.list {
				listShut[c.table] = true
			}
			continue
		}
		if c.list {
			listOpen[c.table] = true
		}
		if c.row {
			if c.table.whole == nil {
				c.table.whole = map[int]bool{}
			}
			c.table.whole[c.sub] = true
		}
		avail -= cost
		chosen = append(chosen, c)
	}
	for {
		m := d.render(head, chosen, safe)
		over := d.count.Count(m.Summary) - budget
		if over <= 0 || len(chosen) == 0 {
			return m
		}
		// chosen is in priority order: drop the least wanted until the overshoot is covered.
		for over > 0 && len(chosen) > 0 {
			last := chosen[len(chosen)-1]
			chosen = chosen[:len(chosen)-1]
			over -= max(1, d.count.Count(last.text))
		}
	}
}

// render writes the chosen candidates in document order with the "left out" line.
func (d *jsonDigest) render(head string, chosen []*candidate, safe string) Memory {
	lines := append([]*candidate(nil), chosen...)
	sort.SliceStable(lines, func(i, j int) bool {
		if lines[i].order != lines[j].order {
			return lines[i].order < lines[j].order
		}
		return lines[i].sub < lines[j].sub
	})
	var b strings.Builder
	b.WriteString(head)
	var locs []string
	values := 0
	wholeRows := map[*table]int{}
	chosenLeaves := 0
	for i := 0; i < len(lines); i++ {
		c := lines[i]
		b.WriteByte('\n')
		if c.quotes {
			values += c.leaves
		}
		if c.leaf {
			chosenLeaves++
		}
		if c.row {
			wholeRows[c.table]++
		}
		if !c.list {
			b.WriteString(c.text)
			if c.quotes {
				locs = append(locs, c.ptr)
			}
			continue
		}
		// Row ids of one array share a line: /ptr/FIRST..LAST/key="a","b".
		j := i
		for j+1 < len(lines) && lines[j+1].list && lines[j+1].table == c.table && lines[j+1].sub == lines[j].sub+1 {
			j++
		}
		t := c.table
		b.WriteString(t.ptr + "/" + strconv.Itoa(c.sub))
		if j > i {
			b.WriteString(".." + strconv.Itoa(lines[j].sub))
		}
		b.WriteString("/" + pointerToken(t.n.idKey) + "=")
		for k := i; k <= j; k++ {
			if k > i {
				b.WriteByte(',')
				values += lines[k].leaves
			}
			b.WriteString(lines[k].text)
			locs = append(locs, lines[k].ptr)
		}
		i = j
	}
	rows := 0
	for _, t := range d.tables {
		rows += t.n.length - wholeRows[t] - t.decomposed
	}
	fields := d.extra
	for _, c := range d.cands {
		if c.leaf {
			fields++
		}
	}
	fields -= chosenLeaves
	if rows > 0 || fields > 0 {
		b.WriteString("\n… left out: ")
		switch {
		case rows > 0 && fields > 0:
			b.WriteString(plural(rows, "row") + ", " + plural(fields, "field"))
		case rows > 0:
			b.WriteString(plural(rows, "row"))
		default:
			b.WriteString(plural(fields, "field"))
		}
		b.WriteString("; recall by pointer")
	}
	return Memory{Summary: b.String(), SafeSummary: safe, Locators: dedupe(locs), Values: values}
}

// shape describes a value's structure without any of its values: keys, counts and types.
func shape(n *node, src []byte, depth int) string {
	switch n.kind {
	case kindObject:
		if len(n.keys) == 0 {
			return "object {}"
		}
		if depth >= 3 {
			return fmt.Sprintf("object {%d keys}", len(n.keys)+n.extraKeys)
		}
		var b strings.Builder
		b.WriteString("object {")
		for i, k := range n.keys {
			if i == maxShapeKeys {
				fmt.Fprintf(&b, ", +%d keys", len(n.keys)+n.extraKeys-maxShapeKeys)
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k + ": " + shape(n.kids[i], src, depth+1))
		}
		if n.extraKeys > 0 && len(n.keys) <= maxShapeKeys {
			fmt.Fprintf(&b, ", +%d keys", n.extraKeys)
		}
		b.WriteString("}")
		return b.String()
	case kindArray:
		head := fmt.Sprintf("array[%d]", n.length)
		if len(n.kids) == 0 {
			return head
		}
		if depth >= 3 {
			return head
		}
		return head + " of " + rowShape(n, src, depth+1)
	case kindString:
		return "string"
	case kindNumber:
		return "number"
	case kindBool:
		return "boolean"
	case kindNull:
		return "null"
	}
	return "value"
}

// rowShape describes an array's first rows: one object shape over the union of their keys,
// one scalar type, or "mixed".
func rowShape(n *node, src []byte, depth int) string {
	first := n.kids[0].kind
	for _, kid := range n.kids[1:] {
		if kid.kind != first {
			return "mixed"
		}
	}
	if first != kindObject {
		return shape(n.kids[0], src, depth)
	}
	union := &node{kind: kindObject}
	seen := map[string]bool{}
	for _, kid := range n.kids {
		for i, k := range kid.keys {
			if !seen[k] {
				seen[k] = true
				union.keys = append(union.keys, k)
				union.kids = append(union.kids, kid.kids[i])
			}
		}
	}
	return shape(union, src, depth)
}

// plural writes a count and its noun: "1 row", "2 rows".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
