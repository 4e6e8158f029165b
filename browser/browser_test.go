package browser

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// rule is one block of the stylesheet: its selector and its properties.
type rule struct {
	selector string
	props    map[string]string
}

// parseGraSS reads a GraSS stylesheet, failing the test on anything that is not
// `selector { name: value; ... }`; a quoted value may hold braces (a caption's {property}).
func parseGraSS(t *testing.T, text string) []rule {
	t.Helper()
	selector := regexp.MustCompile(`^[a-z]+(\.[A-Za-z_]+)?$`)
	var out []rule
	for rest := strings.TrimSpace(text); rest != ""; rest = strings.TrimSpace(rest) {
		open := strings.IndexByte(rest, '{')
		if open < 0 || !selector.MatchString(strings.TrimSpace(rest[:open])) {
			t.Fatalf("the stylesheet does not parse at %q", rest[:min(60, len(rest))])
		}
		r := rule{selector: strings.TrimSpace(rest[:open]), props: map[string]string{}}
		body, quoted, end := rest[open+1:], false, -1
		for i, c := range body {
			if c == '\'' {
				quoted = !quoted
			} else if c == '}' && !quoted {
				end = i
				break
			}
		}
		if end < 0 {
			t.Fatalf("%s: the block does not close", r.selector)
		}
		for _, decl := range strings.Split(body[:end], ";") {
			if strings.TrimSpace(decl) == "" {
				continue
			}
			// Browser's parser (parseGrass) splits a declaration at every colon and drops
			// it, silently, unless there are exactly two parts: a caption holding a colon
			// would never show.
			parts := strings.Split(decl, ":")
			if len(parts) != 2 {
				t.Fatalf("%s: %q is not name: value with a single colon, and Browser would drop it", r.selector, strings.TrimSpace(decl))
			}
			r.props[strings.TrimSpace(parts[0])] = strings.TrimSpace(parts[1])
		}
		out = append(out, r)
		rest = body[end+1:]
	}
	return out
}

// Every label the migrations constrain has a caption of its own, every caption names
// properties those nodes have, and every relationship type of DESIGN §2 is captioned.
func TestStyleCaptionsEveryLabel(t *testing.T) {
	rules := map[string]rule{}
	for _, r := range parseGraSS(t, string(Style)) {
		if _, dup := rules[r.selector]; dup {
			t.Errorf("selector %s is given twice", r.selector)
		}
		rules[r.selector] = r
	}
	constraint := regexp.MustCompile(`FOR \(n:(\w+)\) REQUIRE n\.id IS UNIQUE`)
	entries, err := os.ReadDir("../cypher/migrations")
	if err != nil {
		t.Fatal(err)
	}
	labels := 0
	for _, e := range entries {
		text, err := os.ReadFile("../cypher/migrations/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range constraint.FindAllStringSubmatch(string(text), -1) {
			labels++
			r, ok := rules["node."+m[1]]
			if !ok || !strings.Contains(r.props["caption"], "{") || r.props["color"] == "" && m[1] != "IdempotencyKey" && m[1] != "SchemaMigration" {
				t.Errorf("label %s has no caption of its own (rule %v)", m[1], r.props)
			}
		}
	}
	if labels < 15 {
		t.Fatalf("found %d constrained labels in the migrations, want every label of DESIGN §2", labels)
	}
	if rules["relationship"].props["caption"] != "'<type>'" {
		t.Errorf("relationships are not captioned by their type: %v", rules["relationship"].props)
	}
	for _, rel := range []string{"INCLUDED", "OMITTED", "FORKED_FROM"} {
		if !strings.Contains(rules["relationship."+rel].props["caption"], "{") {
			t.Errorf("%s does not caption its properties", rel)
		}
	}
}

// The guide is a Browser guide: slides, each with runnable Cypher.
func TestGuideHasRunnableSlides(t *testing.T) {
	g := string(Guide)
	slides := strings.Count(g, `<slide class="row-fluid">`)
	runnable := regexp.MustCompile(`(?s)<pre class="[^"]*runnable[^"]*">(.*?)</pre>`).FindAllStringSubmatch(g, -1)
	if !strings.HasPrefix(strings.TrimSpace(g), `<article class="guide">`) || slides < 5 || len(runnable) < slides {
		t.Fatalf("the guide has %d slides and %d runnable blocks", slides, len(runnable))
	}
}
