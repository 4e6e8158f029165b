package extract_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer"

	"github.com/ctxgraph/ctxgraph/extract"
)

// tok counts with the o200k_base vocabulary that assembly.Tokenizer uses. The tests call the
// codec directly: assembly imports extract, so an extract test cannot import assembly.
var tok = func() o200k {
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		panic(err)
	}
	return o200k{codec}
}()

type o200k struct{ codec tokenizer.Codec }

func (t o200k) Count(text string) int {
	n, err := t.codec.Count(text)
	if err != nil {
		panic(err)
	}
	return n
}

// flightsBody is a search result of n flights with a query object and a count.
func flightsBody(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"query": {"from": "SFO", "to": "JFK", "date": "2026-03-14"}, "count": ` + strconv.Itoa(n) + `, "flights": [`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",\n  ")
		}
		fmt.Fprintf(&b, `{"id": "FL-%04d", "carrier": "UA", "price": %d.50, "depart": "2026-03-14T%02d:15:00Z", "seats_left": %d}`,
			i, 300+i*7, i%24, i%9)
	}
	b.WriteString("]}")
	return b.Bytes()
}

// nestedBody hides identifiers a few levels down beside a large free-text field.
func nestedBody() []byte {
	notes := strings.Repeat("The customer called about the delayed shipment and asked for an update. ", 60)
	return []byte(`{"data": {"account": {"profile": {"customer_id": "C-99123", "email": "maria@example.com",` +
		` "tier": "gold"}, "orders": [{"order_id": "A77", "total": 129.95, "status": "shipped"}]},` +
		` "notes": "` + notes + `"}, "meta": {"request_id": "req_5f2a", "elapsed_ms": 42}}`)
}

// logBody is about 31 KB of text whose first line holds a price.
func logBody() []byte {
	var b strings.Builder
	b.WriteString("Quote Q-7781: total price $1,249.99 for 3 items, valid until 2026-04-01\n")
	for i := 2; b.Len() < 31*1024; i++ {
		fmt.Fprintf(&b, "2026-03-14T10:%02d:%02dZ INFO worker-%d processed batch %d in %dms\n", i/60%60, i%60, i%7, i, 10+i%90)
	}
	b.WriteString("2026-03-14T11:59:59Z ERROR worker-3 failed: disk quota exceeded on /var/data/out.csv\n")
	return []byte(b.String())
}

func TestDeriveVerbatim(t *testing.T) {
	tests := []struct {
		name    string
		r       extract.Result
		summary string
		locs    []string
		values  int
	}{
		{
			name:    "json keeps key order and exact values",
			r:       extract.Result{Tool: "book_flight", Arguments: []byte(`{ "to": "JFK", "from": "SFO" }`), Body: []byte(`{"status": "confirmed", "booking_id": "BK-48213", "price": 412.50, "note": "<ok> & \u00e9"}`)},
			summary: `book_flight {"to":"JFK","from":"SFO"} → {"status":"confirmed","booking_id":"BK-48213","price":412.50,"note":"<ok> & \u00e9"}`,
			locs:    []string{""},
			values:  4,
		},
		{
			name:    "text without its final newline",
			r:       extract.Result{Tool: "read_file", Arguments: []byte(`{"path":"notes.txt"}`), Body: []byte("first line\nsecond line\n")},
			summary: "read_file {\"path\":\"notes.txt\"} → first line\nsecond line",
			locs:    []string{"lines=1-2"},
			values:  2,
		},
		{
			name:    "no arguments",
			r:       extract.Result{Tool: "now", Body: []byte(`"2026-03-14T10:00:00Z"`)},
			summary: `now {} → "2026-03-14T10:00:00Z"`,
			locs:    []string{""},
			values:  1,
		},
		{
			name:    "arguments that are not JSON are kept as given",
			r:       extract.Result{Tool: "shell", Arguments: []byte(`ls -la`), Body: []byte(`[1, 2]`)},
			summary: `shell ls -la → [1,2]`,
			locs:    []string{""},
			values:  2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := extract.Derive(tt.r, extract.Settings{VerbatimTokens: 200, DigestTokens: 100}, tok)
			if m.Summary != tt.summary {
				t.Errorf("summary: got %q, want %q", m.Summary, tt.summary)
			}
			if !m.Whole {
				t.Errorf("whole: got false, want true")
			}
			if !reflect.DeepEqual(m.Locators, tt.locs) {
				t.Errorf("locators: got %q, want %q", m.Locators, tt.locs)
			}
			if m.Values != tt.values {
				t.Errorf("values: got %d, want %d", m.Values, tt.values)
			}
		})
	}
}

func TestDeriveEmpty(t *testing.T) {
	m := extract.Derive(extract.Result{Tool: "ping", Arguments: []byte(`{"host":"db1"}`)}, extract.Settings{VerbatimTokens: 50, DigestTokens: 50}, tok)
	if want := `ping {"host":"db1"} → (empty)`; m.Summary != want {
		t.Errorf("summary: got %q, want %q", m.Summary, want)
	}
	if want := "ping(host) result: empty"; m.SafeSummary != want {
		t.Errorf("safe summary: got %q, want %q", m.SafeSummary, want)
	}
	if len(m.Locators) != 0 || m.Values != 0 {
		t.Errorf("got %d locators and %d values, want none", len(m.Locators), m.Values)
	}
}

func TestDeriveTableDigest(t *testing.T) {
	body := flightsBody(200)
	for _, budget := range []int{120, 300, 800} {
		t.Run(fmt.Sprintf("digest %d tokens", budget), func(t *testing.T) {
			r := extract.Result{Tool: "search_flights", Arguments: []byte(`{"from":"SFO","to":"JFK"}`), Body: body}
			m := extract.Derive(r, extract.Settings{VerbatimTokens: 200, DigestTokens: budget}, tok)
			t.Log("\n" + m.Summary)
			if n := tok.Count(m.Summary); n > budget {
				t.Errorf("tokens: got %d, want at most %d", n, budget)
			}
			if m.Whole {
				t.Errorf("whole: got true, want false")
			}
			if !strings.HasPrefix(m.Summary, `search_flights {"from":"SFO","to":"JFK"} → JSON object, `) {
				t.Errorf("summary does not start with the call: %q", m.Summary)
			}
			if !strings.Contains(m.Summary, "/flights: 200 rows {id,carrier,price,depart,seats_left}") {
				t.Errorf("summary does not state the array's length and keys: %q", m.Summary)
			}
			row0 := `/flights/0={"id":"FL-0000","carrier":"UA","price":300.50,"depart":"2026-03-14T00:15:00Z","seats_left":0}`
			if !strings.Contains(m.Summary, row0) {
				t.Errorf("summary does not quote the first row exactly: got %q, want it to contain %q", m.Summary, row0)
			}
			if !contains(m.Locators, "/flights/0") {
				t.Errorf("locators: got %q, want /flights/0 among them", m.Locators)
			}
			if !strings.Contains(m.Summary, "… left out: ") || !strings.Contains(m.Summary, " rows") {
				t.Errorf("summary does not say what was left out: %q", m.Summary)
			}
			checkLocators(t, body, m)
		})
	}
}

func TestDeriveRootArray(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("[")
	for i := 0; i < 500; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"sku":"SKU-%d","name":"Widget %d","stock":%d}`, i, i, i*3)
	}
	b.WriteString("]")
	m := extract.Derive(extract.Result{Tool: "list_products", Body: b.Bytes()}, extract.Settings{VerbatimTokens: 100, DigestTokens: 250}, tok)
	t.Log("\n" + m.Summary)
	if want := "list_products {} → JSON array of 500 rows {sku,name,stock}, "; !strings.HasPrefix(m.Summary, want) {
		t.Errorf("summary: got %q, want it to start with %q", m.Summary, want)
	}
	if !strings.Contains(m.Summary, `/0={"sku":"SKU-0","name":"Widget 0","stock":0}`) {
		t.Errorf("summary does not quote row 0: %q", m.Summary)
	}
	if !strings.Contains(m.Summary, `/sku="SKU-`) {
		t.Errorf("summary does not list the ids of further rows: %q", m.Summary)
	}
	if n := tok.Count(m.Summary); n > 250 {
		t.Errorf("tokens: got %d, want at most 250", n)
	}
	checkLocators(t, b.Bytes(), m)
}

func TestDeriveNested(t *testing.T) {
	body := nestedBody()
	m := extract.Derive(extract.Result{Tool: "get_account", Arguments: []byte(`{"account":"C-99123"}`), Body: body}, extract.Settings{VerbatimTokens: 100, DigestTokens: 150}, tok)
	t.Log("\n" + m.Summary)
	for _, want := range []string{
		`/data/account/profile/customer_id="C-99123"`,
		`/data/account/profile/email="maria@example.com"`,
		`/meta/request_id="req_5f2a"`,
		`/data/account/orders/0={"order_id":"A77","total":129.95,"status":"shipped"}`,
	} {
		if !strings.Contains(m.Summary, want) {
			t.Errorf("summary: got %q, want it to contain %q", m.Summary, want)
		}
	}
	if strings.Contains(m.Summary, "delayed shipment") {
		t.Errorf("summary quotes the long notes that cannot fit: %q", m.Summary)
	}
	if n := tok.Count(m.Summary); n > 150 {
		t.Errorf("tokens: got %d, want at most 150", n)
	}
	checkLocators(t, body, m)
}

func TestDeriveText(t *testing.T) {
	body := logBody()
	m := extract.Derive(extract.Result{Tool: "fetch_quote", Arguments: []byte(`{"id":"Q-7781"}`), Body: body}, extract.Settings{VerbatimTokens: 200, DigestTokens: 300}, tok)
	t.Log("\n" + m.Summary)
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	if n := tok.Count(m.Summary); n > 300 {
		t.Errorf("tokens: got %d, want at most 300", n)
	}
	if want := fmt.Sprintf("fetch_quote {\"id\":\"Q-7781\"} → text, %d lines, %d bytes\nlines=1-", len(lines), len(body)); !strings.HasPrefix(m.Summary, want) {
		t.Errorf("summary: got %q, want it to start with %q", m.Summary, want)
	}
	if !strings.Contains(m.Summary, "\n"+lines[0]+"\n") {
		t.Errorf("summary does not quote the first line %q: %q", lines[0], m.Summary)
	}
	if !strings.Contains(m.Summary, "\n"+lines[len(lines)-1]) {
		t.Errorf("summary does not quote the last line %q: %q", lines[len(lines)-1], m.Summary)
	}
	if len(m.Locators) != 2 || !strings.HasPrefix(m.Locators[0], "lines=1-") {
		t.Fatalf("locators: got %q, want a head and a tail line range", m.Locators)
	}
	for _, loc := range m.Locators {
		var a, b int
		if _, err := fmt.Sscanf(loc, "lines=%d-%d", &a, &b); err != nil {
			t.Fatalf("locator %q: %v", loc, err)
		}
		if want := loc + ":\n" + strings.Join(lines[a-1:b], "\n"); !strings.Contains(m.Summary, want) {
			t.Errorf("locator %q: summary does not quote lines %d-%d exactly", loc, a, b)
		}
	}
	if !strings.Contains(m.Summary, "… left out: lines ") {
		t.Errorf("summary does not say which lines were left out: %q", m.Summary)
	}
}

func TestDeriveJSONStringIsText(t *testing.T) {
	text := strings.TrimSuffix(string(logBody()), "\n")
	body, _ := json.Marshal(text)
	m := extract.Derive(extract.Result{Tool: "cat", Arguments: []byte(`{"path":"/var/log/x.log"}`), Body: body}, extract.Settings{VerbatimTokens: 200, DigestTokens: 300}, tok)
	lines := strings.Split(text, "\n")
	if want := fmt.Sprintf("cat {\"path\":\"/var/log/x.log\"} → text, %d lines", len(lines)); !strings.HasPrefix(m.Summary, want) {
		t.Fatalf("summary: got %q, want it to start with %q", m.Summary, want)
	}
	if !strings.Contains(m.Summary, "\n"+lines[1]+"\n") {
		t.Errorf("summary does not quote the second line %q of the string: %q", lines[1], m.Summary)
	}
	if len(m.Locators) == 0 || !strings.HasPrefix(m.Locators[0], "lines=1-") {
		t.Errorf("locators: got %q, want line ranges of the string's text", m.Locators)
	}
	small, _ := json.Marshal("a short answer")
	if m := extract.Derive(extract.Result{Tool: "cat", Body: small}, extract.Settings{VerbatimTokens: 200, DigestTokens: 300}, tok); !m.Whole || !strings.HasSuffix(m.Summary, string(small)) {
		t.Errorf("a short JSON string: got %q (whole %v), want it quoted whole as JSON", m.Summary, m.Whole)
	}
}

func TestDeriveLongFirstLine(t *testing.T) {
	body := []byte("price=$19.99 " + strings.Repeat("lorem ipsum dolor sit amet ", 2000))
	m := extract.Derive(extract.Result{Tool: "scrape", Body: body}, extract.Settings{VerbatimTokens: 100, DigestTokens: 120}, tok)
	t.Log("\n" + m.Summary)
	if len(m.Locators) != 1 || !strings.HasPrefix(m.Locators[0], "bytes=0-") {
		t.Fatalf("locators: got %q, want one byte range", m.Locators)
	}
	var end int
	fmt.Sscanf(m.Locators[0], "bytes=0-%d", &end)
	if !strings.Contains(m.Summary, "\n"+string(body[:end])+"\n") {
		t.Errorf("summary does not quote bytes 0-%d exactly: %q", end, m.Summary)
	}
	if n := tok.Count(m.Summary); n > 120 {
		t.Errorf("tokens: got %d, want at most 120", n)
	}
}

func TestDeriveDeterministic(t *testing.T) {
	results := []extract.Result{
		{Tool: "search_flights", Arguments: []byte(`{"from":"SFO"}`), Body: flightsBody(200)},
		{Tool: "get_account", Body: nestedBody()},
		{Tool: "fetch_quote", Body: logBody()},
	}
	for _, r := range results {
		t.Run(r.Tool, func(t *testing.T) {
			s := extract.Settings{VerbatimTokens: 100, DigestTokens: 200}
			a, b := extract.Derive(r, s, tok), extract.Derive(r, s, tok)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("got %+v then %+v, want equal", a, b)
			}
		})
	}
}

func TestSafeSummaryHoldsNoValue(t *testing.T) {
	tests := []struct {
		name string
		r    extract.Result
		want string
	}{
		{
			name: "verbatim object",
			r:    extract.Result{Tool: "book_flight", Arguments: []byte(`{"from":"SFO","to":"JFK"}`), Body: []byte(`{"booking_id":"BK-48213","status":"confirmed"}`)},
			want: "book_flight(from, to) result: object {booking_id: string, status: string}; 46 bytes JSON",
		},
		{
			name: "table",
			r:    extract.Result{Tool: "search_flights", Arguments: []byte(`{"from":"SFO","to":"JFK"}`), Body: flightsBody(200)},
			want: "search_flights(from, to) result: object {query: object {from: string, to: string, date: string}, count: number, flights: array[200] of object {id: string, carrier: string, price: number, depart: string, seats_left: number}}",
		},
		{
			name: "nested",
			r:    extract.Result{Tool: "get_account", Body: nestedBody()},
			want: "get_account result: object {data: object {account: object {profile: object {3 keys}, orders: array[1]}, notes: string}, meta: object {request_id: string, elapsed_ms: number}}",
		},
		{
			name: "text",
			r:    extract.Result{Tool: "fetch_quote", Arguments: []byte(`{"id":"Q-7781"}`), Body: logBody()},
			want: "fetch_quote(id) result: text, ",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := extract.Derive(tt.r, extract.Settings{VerbatimTokens: 100, DigestTokens: 200}, tok)
			if !strings.HasPrefix(m.SafeSummary, tt.want) {
				t.Errorf("safe summary: got %q, want it to start with %q", m.SafeSummary, tt.want)
			}
			for _, v := range bodyValues(tt.r.Arguments, tt.r.Body) {
				if strings.Contains(m.SafeSummary, v) {
					t.Errorf("safe summary %q holds the value %q", m.SafeSummary, v)
				}
			}
		})
	}
}

func TestDeriveLargeBody(t *testing.T) {
	body := flightsBody(40000) // about 4 MB
	m := extract.Derive(extract.Result{Tool: "search_flights", Body: body}, extract.Settings{VerbatimTokens: 500, DigestTokens: 400}, tok)
	if !strings.Contains(m.Summary, "/flights: 40000 rows") {
		t.Errorf("summary does not state the real length: %q", m.Summary)
	}
	if n := tok.Count(m.Summary); n > 400 {
		t.Errorf("tokens: got %d, want at most 400", n)
	}
	checkLocators(t, body, m)
}

func BenchmarkDeriveLargeTable(b *testing.B) {
	body := flightsBody(40000)
	r := extract.Result{Tool: "search_flights", Body: body}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		extract.Derive(r, extract.Settings{VerbatimTokens: 500, DigestTokens: 400}, tok)
	}
}

// checkLocators resolves each of a digest's JSON Pointers in body and checks the summary
// quotes exactly the value it names.
func checkLocators(t *testing.T, body []byte, m extract.Memory) {
	t.Helper()
	if len(m.Locators) == 0 {
		t.Fatalf("locators: got none, want some")
	}
	for _, loc := range m.Locators {
		raw, err := resolve(body, loc)
		if err != nil {
			t.Errorf("locator %q: %v", loc, err)
			continue
		}
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			t.Fatalf("locator %q: %v", loc, err)
		}
		value := b.String()
		if strings.Contains(m.Summary, loc+"=") {
			if !strings.Contains(m.Summary, loc+"="+value) {
				t.Errorf("locator %q: got summary %q, want it to quote %s", loc, m.Summary, value)
			}
			continue
		}
		// A row id in a shared line: /table/FIRST..LAST/key="a","b".
		i := strings.LastIndex(loc, "/")
		j := strings.LastIndex(loc[:i], "/")
		row, key := loc[j+1:i], loc[i+1:]
		found := false
		for _, line := range strings.Split(m.Summary, "\n") {
			if strings.HasPrefix(line, loc[:j+1]) && strings.Contains(line, "/"+key+"=") {
				first, _, _ := strings.Cut(line[j+1:], "/")
				lo, hi, _ := strings.Cut(first, "..")
				vals := strings.Split(line[strings.Index(line, "/"+key+"=")+len(key)+2:], ",")
				a, _ := strconv.Atoi(lo)
				r, _ := strconv.Atoi(row)
				if hi == "" {
					hi = lo
				}
				z, _ := strconv.Atoi(hi)
				if r >= a && r <= z && r-a < len(vals) && vals[r-a] == value {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("locator %q: summary %q does not quote %s", loc, m.Summary, value)
		}
	}
}

// resolve returns the raw value a JSON Pointer names in doc.
func resolve(doc []byte, ptr string) (json.RawMessage, error) {
	raw := json.RawMessage(doc)
	if ptr == "" {
		return raw, nil
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, fmt.Errorf("pointer %q does not start with /", ptr)
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch bytes.TrimSpace(raw)[0] {
		case '{':
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(raw, &obj); err != nil {
				return nil, err
			}
			v, ok := obj[tok]
			if !ok {
				return nil, fmt.Errorf("no key %q", tok)
			}
			raw = v
		case '[':
			var arr []json.RawMessage
			if err := json.Unmarshal(raw, &arr); err != nil {
				return nil, err
			}
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(arr) {
				return nil, fmt.Errorf("no index %q", tok)
			}
			raw = arr[i]
		default:
			return nil, fmt.Errorf("%q goes through a scalar", ptr)
		}
	}
	return raw, nil
}

// bodyValues lists the values of a result worth checking a safe summary against: every JSON
// string value and number of two or more characters (but not a number equal to an array's
// length, which the summary states as a count), or every longer word of text.
func bodyValues(bodies ...[]byte) []string {
	var out []string
	for _, body := range bodies {
		var doc any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			for _, w := range strings.Fields(string(body)) {
				if len(w) > 3 {
					out = append(out, w)
				}
			}
			continue
		}
		lengths := map[string]bool{}
		var numbers []string
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				for _, x := range v {
					walk(x)
				}
			case []any:
				lengths[strconv.Itoa(len(v))] = true
				for _, x := range v {
					walk(x)
				}
			case string:
				if len(v) >= 2 {
					out = append(out, v)
				}
			case json.Number:
				if len(v) >= 2 {
					numbers = append(numbers, v.String())
				}
			}
		}
		walk(doc)
		for _, n := range numbers {
			if !lengths[n] {
				out = append(out, n)
			}
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestDeriveEdgeCases(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 100) + `"x"` + strings.Repeat(`}`, 100)
	tests := []struct {
		name string
		body string
	}{
		{"empty object", `{}`},
		{"empty array", `[]`},
		{"arrays of arrays", `[[1,2],[3],[],[4,[5,6]]]`},
		{"scalar rows", `{"tags":["a","b","c","d","e","f","g","h","i","j","k","l","m"]}`},
		{"keys needing escapes", `{"a/b":{"m~n":"v-1"},"":"empty key","q\"k":"k-2"}`},
		{"mixed rows", `{"rows":[{"id":"r1"},2,"s",null,true,{"id":"r6"}]}`},
		{"deep nesting", deep},
		{"huge root string", `"` + strings.Repeat("abc ", 5000) + `"`},
		{"huge field", `{"id":"X-1","blob":"` + strings.Repeat("Zm9v", 20000) + `"}`},
		{"not UTF-8", "\xff\xfe\x00bin"},
		{"whitespace text", "\n\n\n"},
	}
	for _, tt := range tests {
		for _, s := range []extract.Settings{{VerbatimTokens: 0, DigestTokens: 0}, {VerbatimTokens: 0, DigestTokens: 80}, {VerbatimTokens: 40, DigestTokens: 80}} {
			t.Run(fmt.Sprintf("%s %d/%d", tt.name, s.VerbatimTokens, s.DigestTokens), func(t *testing.T) {
				m := extract.Derive(extract.Result{Tool: "t", Body: []byte(tt.body)}, s, tok)
				if s.DigestTokens > 0 && !m.Whole {
					if n := tok.Count(m.Summary); n > s.DigestTokens {
						t.Errorf("tokens: got %d, want at most %d: %q", n, s.DigestTokens, m.Summary)
					}
				}
				switch {
				case strings.HasPrefix(tt.body, `"`) && !m.Whole:
					// A JSON string too long to quote is digested as its text.
					for _, loc := range m.Locators {
						if !strings.HasPrefix(loc, "lines=") && !strings.HasPrefix(loc, "bytes=") {
							t.Errorf("locator %q: want a line or byte range of the string's text", loc)
						}
					}
				case json.Valid([]byte(tt.body)) && len(m.Locators) > 0 && !m.Whole:
					checkLocators(t, []byte(tt.body), m)
				}
				if !reflect.DeepEqual(m, extract.Derive(extract.Result{Tool: "t", Body: []byte(tt.body)}, s, tok)) {
					t.Errorf("got two different memories of the same result")
				}
			})
		}
	}
}
