package cypher

import (
	"embed"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// queryFiles holds one .cypher file per operation. Each starts with a header line
// `// name: <Name>` that must match its file name, then a comment saying what it does. A
// line `// include: <Part>` stands for the text of queries/parts/<Part>.cypher, which
// starts with `// part: <Part>` and the comment that says what it is (neither included): a
// part of several statements, written once (and may include other parts).
//
//go:embed queries/*.cypher queries/parts/*.cypher
var queryFiles embed.FS

var (
	queriesOnce sync.Once
	queries     map[string]string
	queriesErr  error
)

func loadQueries() {
	queries = map[string]string{}
	entries, err := queryFiles.ReadDir("queries")
	if err != nil {
		queriesErr = err
		return
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		name := strings.TrimSuffix(e.Name(), ".cypher")
		body, err := readHeaded(path.Join("queries", e.Name()), "// name: "+name)
		if err == nil {
			body, err = withParts(body)
		}
		if err != nil {
			queriesErr = err
			return
		}
		queries[name] = body
	}
}

// readHeaded reads a query file whose first line must be header.
func readHeaded(file, header string) (string, error) {
	body, err := queryFiles.ReadFile(file)
	if err != nil {
		return "", err
	}
	if first, _, _ := strings.Cut(string(body), "\n"); strings.TrimSpace(first) != header {
		return "", fmt.Errorf("query file %s: first line must be %q", file, header)
	}
	return string(body), nil
}

// withParts replaces each `// include: <Part>` line of a query with the part's text, its own
// includes replaced in turn.
func withParts(body string) (string, error) {
	return includeParts(body, nil)
}

// includeParts is withParts within the parts named in outer, which a part may not include.
func includeParts(body string, outer []string) (string, error) {
	lines := strings.SplitAfter(body, "\n")
	for i, line := range lines {
		part, ok := strings.CutPrefix(strings.TrimSpace(line), "// include: ")
		if !ok {
			continue
		}
		if slices.Contains(outer, part) {
			return "", fmt.Errorf("part %s includes itself (through %s)", part, strings.Join(outer, ", "))
		}
		text, err := readHeaded(path.Join("queries", "parts", part+".cypher"), "// part: "+part)
		if err != nil {
			return "", err
		}
		if text, err = includeParts(partBody(text), append(outer, part)); err != nil {
			return "", err
		}
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		lines[i] = text
	}
	return strings.Join(lines, ""), nil
}

// partBody is a part's text without its header and the comment that follows it: what the
// part says of itself is for its reader, not for every request that sends a statement
// holding it (ConversationRecords holds eleven parts). An include line is text.
func partBody(text string) string {
	_, body, _ := strings.Cut(text, "\n")
	for {
		line, rest, _ := strings.Cut(body, "\n")
		if t := strings.TrimSpace(line); !strings.HasPrefix(t, "//") || strings.HasPrefix(t, "// include: ") {
			return body
		}
		body = rest
	}
}

// queryText returns the text of the named query.
func queryText(name string) (string, error) {
	queriesOnce.Do(loadQueries)
	if queriesErr != nil {
		return "", queriesErr
	}
	text, ok := queries[name]
	if !ok {
		return "", fmt.Errorf("no query named %s", name)
	}
	return text, nil
}

func allQueryNames() []string {
	queriesOnce.Do(loadQueries)
	names := make([]string, 0, len(queries))
	for n := range queries {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// queryCoverage records which queries ran, so that the integration tests can prove every
// .cypher file was exercised against the real Neo4j, and how long they took, so that a
// benchmark can say where a request's time in Neo4j goes.
type queryCoverage struct {
	mu    sync.Mutex
	set   map[string]bool
	times map[string]*QueryTime
}

// QueryTime sums the runs of one query: Statement is the time from sending it to holding
// its records, Server the part of it Neo4j reports (result available after plus consumed
// after). Transactions counts the transactions the query opened (their first statement)
// and Transaction their whole time, commit included.
type QueryTime struct {
	Runs, Transactions             int64
	Statement, Server, Transaction time.Duration
}

// coverage is shared by every store of the process.
var coverage = &queryCoverage{set: map[string]bool{}, times: map[string]*QueryTime{}}

func (c *queryCoverage) mark(name string) {
	c.mu.Lock()
	c.set[name] = true
	c.mu.Unlock()
}

func (c *queryCoverage) timed(name string, statement, server time.Duration) {
	c.mu.Lock()
	c.set[name] = true
	t := c.time(name)
	t.Runs++
	t.Statement += statement
	t.Server += server
	c.mu.Unlock()
}

func (c *queryCoverage) transaction(first string, d time.Duration) {
	c.mu.Lock()
	t := c.time(first)
	t.Transactions++
	t.Transaction += d
	c.mu.Unlock()
}

func (c *queryCoverage) time(name string) *QueryTime {
	t := c.times[name]
	if t == nil {
		t = &QueryTime{}
		c.times[name] = t
	}
	return t
}

// QueryTimes returns the time every query has taken in this process so far.
func QueryTimes() map[string]QueryTime {
	coverage.mu.Lock()
	defer coverage.mu.Unlock()
	out := make(map[string]QueryTime, len(coverage.times))
	for n, t := range coverage.times {
		out[n] = *t
	}
	return out
}

func (c *queryCoverage) ran() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.set))
	for n := range c.set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// mustQuery returns the text of a query that is known to exist; the embedded files are
// checked by a unit test, so a miss here is a programming error.
func mustQuery(name string) string {
	text, err := queryText(name)
	if err != nil {
		panic(err)
	}
	return text
}
