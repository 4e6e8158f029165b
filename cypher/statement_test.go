package cypher

import (
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/ctxgraph/ctxgraph/model"
)

// Every .cypher file is declared as a typed statement, and every declared statement has its
// file.
func TestEveryQueryFileIsATypedStatement(t *testing.T) {
	var declared []string
	for name := range queryTypes {
		declared = append(declared, name)
	}
	sort.Strings(declared)
	if files := QueryNames(); !slices.Equal(declared, files) {
		t.Errorf("declared statements\n got %v\nwant %v (the .cypher files)", declared, files)
	}
}

// A statement's parameter type names exactly the $parameters its text uses, and its row type
// exactly the columns its RETURN answers: a misspelt parameter or alias fails here.
func TestStatementTypesMatchTheirText(t *testing.T) {
	for name, types := range queryTypes {
		t.Run(name, func(t *testing.T) {
			text, err := queryText(name)
			if err != nil {
				t.Fatal(err)
			}
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("the statement's types cannot be planned: %v", r)
					}
				}()
				fieldsOf(name, types[0], "param")
				fieldsOf(name, types[1], "col")
			}()
			code := withoutComments(text)
			if got, want := tagNames(types[0], "param"), parametersOf(code); !slices.Equal(got, want) {
				t.Errorf("parameter fields %v, want the text's $parameters %v", got, want)
			}
			want, err := returnColumns(code)
			if err != nil {
				t.Fatal(err)
			}
			if got := tagNames(types[1], "col"); !slices.Equal(got, want) {
				t.Errorf("row fields %v, want the RETURN columns %v", got, want)
			}
		})
	}
}

func tagNames(t reflect.Type, tag string) []string {
	names := []string{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get(tag), ",")
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

var commentLine = regexp.MustCompile(`(?m)^\s*//.*$`)

func withoutComments(text string) string { return commentLine.ReplaceAllString(text, "") }

var parameter = regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)`)

// parametersOf lists the distinct $parameters of a statement, sorted.
func parametersOf(code string) []string {
	names := []string{}
	for _, m := range parameter.FindAllStringSubmatch(code, -1) {
		if !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	sort.Strings(names)
	return names
}

var (
	finalReturn = regexp.MustCompile(`(?m)^RETURN\s`)
	aliased     = regexp.MustCompile(`(?is)^(.*\S)\s+AS\s+([A-Za-z_][A-Za-z0-9_]*)$`)
	identifier  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	clauseEnd   = regexp.MustCompile(`^\s(ORDER\s+BY|SKIP|LIMIT)\s`)
)

// returnColumns lists the columns of a statement's final RETURN (the last one at the start
// of a line; those inside subqueries are indented), sorted; none when it returns nothing.
func returnColumns(code string) ([]string, error) {
	locs := finalReturn.FindAllStringIndex(code, -1)
	if len(locs) == 0 {
		return []string{}, nil
	}
	body := strings.TrimPrefix(strings.TrimSpace(code[locs[len(locs)-1][1]:]), "DISTINCT ")
	var items []string
	depth, start := 0, 0
	quote := rune(0)
	for i, r := range body {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case strings.ContainsRune("([{", r):
			depth++
		case strings.ContainsRune(")]}", r):
			depth--
		case depth == 0 && r == ',':
			items = append(items, body[start:i])
			start = i + 1
		}
		if depth == 0 && quote == 0 && clauseEnd.MatchString(body[i:]) {
			body = body[:i]
			break
		}
	}
	items = append(items, body[start:])
	cols := []string{}
	for _, item := range items {
		item = strings.TrimSpace(item)
		if m := aliased.FindStringSubmatch(item); m != nil {
			cols = append(cols, m[2])
		} else if identifier.MatchString(item) {
			cols = append(cols, item)
		} else {
			return nil, &model.Error{Kind: model.KindInvalid, Message: "a RETURN item without an alias: " + item}
		}
	}
	sort.Strings(cols)
	return cols, nil
}

// The parser of RETURN columns reads what the statements' test relies on.
func TestReturnColumns(t *testing.T) {
	for _, c := range []struct {
		code string
		want []string
	}{
		{"MATCH (n)\nRETURN n", []string{"n"}},
		{"CALL {\n  RETURN 1 AS x\n}\nRETURN a.id AS id, collect(b {.x, .y}) AS bs, c", []string{"bs", "c", "id"}},
		{"RETURN a, [(d)-->(a) |\n  d {.a, .b}] AS ds\nORDER BY a.seq", []string{"a", "ds"}},
		{"MERGE (m {id: $id})", []string{}},
		{"RETURN 'a, b' AS s LIMIT 3", []string{"s"}},
	} {
		got, err := returnColumns(c.code)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("returnColumns(%q) = %v, %v; want %v", c.code, got, err, c.want)
		}
	}
	if _, err := returnColumns("RETURN a.id"); err == nil {
		t.Error("an unaliased property access was read as a column")
	}
}

// testQuery is a statement declared for the tests alone, so that it is not in queryTypes.
func testQuery[P, R any](name string) *query[P, R] { return &query[P, R]{name: name} }

type scanRow struct {
	ID       string     `col:"id"`
	Seq      int64      `col:"seq"`
	Node     props      `col:"n"`
	Refs     []string   `col:"refs"`
	At       time.Time  `col:"at"`
	Stale    *time.Time `col:"stale"`
	Optional string     `col:"optional"`
}

// Decoding reads every column into its field, a null as the zero value, and fails on a
// column the answer lacks or a value its field cannot hold, instead of reading a zero value.
func TestScanIsStrict(t *testing.T) {
	q := testQuery[noParams, scanRow]("Scan")
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.FixedZone("x", 3600))
	rec := &neo4j.Record{
		Keys:   []string{"id", "seq", "n", "refs", "at", "stale", "optional"},
		Values: []any{"r1", int64(7), map[string]any{"name": "n"}, []any{"a", "b"}, at, nil, nil},
	}
	var row scanRow
	if err := q.scan(rec, &row); err != nil {
		t.Fatal(err)
	}
	want := scanRow{ID: "r1", Seq: 7, Node: props{"name": "n"}, Refs: []string{"a", "b"}, At: at.UTC()}
	if !reflect.DeepEqual(row, want) {
		t.Errorf("got %+v, want %+v", row, want)
	}

	missing := &neo4j.Record{Keys: rec.Keys[:6], Values: rec.Values[:6]}
	if err := q.scan(missing, &row); model.KindOf(err) != model.KindInternal || !strings.Contains(err.Error(), "optional") {
		t.Errorf("a missing column: got %v, want an internal error naming it", err)
	}
	wrong := &neo4j.Record{Keys: rec.Keys, Values: slices.Clone(rec.Values)}
	wrong.Values[1] = "7"
	if err := q.scan(wrong, &row); model.KindOf(err) != model.KindInternal || !strings.Contains(err.Error(), "seq") {
		t.Errorf("a string where an integer belongs: got %v, want an internal error naming the column", err)
	}
}

type encodeParams struct {
	AccountID  string     `param:"accountId"`
	RunID      string     `param:"runId,null"`
	Budget     int        `param:"tokenBudget,null"`
	StaleAfter *time.Time `param:"staleAfter"`
	Code       *string    `param:"code"`
}

// Parameters are encoded under their tags; a nullable field's zero value, a nil pointer and
// nothing else is sent as null.
func TestEncodeSendsNullsAsTagged(t *testing.T) {
	q := testQuery[encodeParams, noRows]("Encode")
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.FixedZone("x", 3600))
	empty := ""
	for _, c := range []struct {
		in   encodeParams
		want map[string]any
	}{
		{encodeParams{AccountID: "acc"}, map[string]any{"accountId": "acc", "runId": nil, "tokenBudget": nil, "staleAfter": nil, "code": nil}},
		{encodeParams{AccountID: "acc", RunID: "run", Budget: 5, StaleAfter: &at, Code: &empty},
			map[string]any{"accountId": "acc", "runId": "run", "tokenBudget": 5, "staleAfter": at.UTC(), "code": ""}},
	} {
		if got := q.encode(&c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("encode(%+v)\n got %v\nwant %v", c.in, got, c.want)
		}
	}
}

var (
	sinkParams map[string]any
	sinkRow    recordRow
)

// The assembly path runs ConversationRecords on every request: its typed parameters cost
// the allocations of the map literal they replaced, and decoding its answer none.
func TestTypedStatementsAllocateLikeMaps(t *testing.T) {
	accountID, branchID, participantID := strings.Repeat("a", 8), strings.Repeat("b", 8), strings.Repeat("p", 8)
	since := map[string]int64{branchID: 3}
	literal := testing.AllocsPerRun(100, func() {
		sinkParams = map[string]any{"accountId": accountID, "branchId": branchID, "participantId": participantID,
			"runId": nil, "since": since}
	})
	typed := testing.AllocsPerRun(100, func() {
		sinkParams = conversationRecords.encode(&conversationRecordsParams{AccountID: accountID, BranchID: branchID,
			ParticipantID: participantID, Since: since})
	})
	if typed > literal {
		t.Errorf("encoding allocates %v times, the map literal %v", typed, literal)
	}
	rec := &neo4j.Record{Keys: []string{"kind", "record"}, Values: []any{"memory", map[string]any{"id": "m"}}}
	scan := testing.AllocsPerRun(100, func() {
		var row recordRow
		if err := conversationRecords.scan(rec, &row); err != nil {
			t.Fatal(err)
		}
		sinkRow = row
	})
	if scan > 0 {
		t.Errorf("decoding a ConversationRecords row allocates %v times, want 0", scan)
	}
	if sinkRow.Kind != "memory" || sinkRow.Record.str("id") != "m" {
		t.Errorf("decoded %+v", sinkRow)
	}
}
