package scenario

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ctxgraph/ctxgraph/model"
)

// Conversation is one conversation file (testdata/CONVERSATIONS.md): an agent conversation
// played turn by turn through POST /v1/generations against a scripted model, with the
// values each turn's first model call must carry because only an earlier turn held them.
type Conversation struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// TokenBudget is every turn's budget unless the turn names its own; 0 is the policy's.
	TokenBudget  int           `json:"tokenBudget"`
	Participants []Participant `json:"participants"`
	// Branches are main and the forks, each after a turn's final assistant message.
	Branches []ConversationBranch `json:"branches"`
	// Tools are the client's tools, offered on every model call.
	Tools []model.ToolSpec `json:"tools"`
	Turns []Turn           `json:"turns"`
}

// ConversationBranch is a branch of a conversation: main is the root, any other forks from
// Parent after the final assistant message of the turn ForkAfterTurn.
type ConversationBranch struct {
	Key           string `json:"key"`
	Parent        string `json:"parent"`
	ForkAfterTurn string `json:"forkAfterTurn"`
}

// Turn is one user message and what follows it: the scripted model's answers, the client's
// tool results, and what the turn's model calls must and must not carry.
type Turn struct {
	Key string `json:"key"`
	// Branch is the branch the turn is on; empty means main.
	Branch string `json:"branch"`
	// Participant is the participant who answers; empty means the first.
	Participant string `json:"participant"`
	// User is the user message of the turn.
	User        string `json:"user"`
	TokenBudget int    `json:"tokenBudget"`
	// Steps are the scripted model's answers to the turn's model calls, in order: tool
	// calls, then at last a text.
	Steps []Step `json:"steps"`
	// Results are the client's outputs of the turn's tool calls, by call key.
	Results map[string]ToolOutput `json:"results"`
	// Needs are the values the turn's first model call (or the call after its recall) must
	// carry.
	Needs []Need `json:"needs"`
	// MustNotContain are values no model call of the turn may carry.
	MustNotContain []string `json:"mustNotContain"`
}

// Step is the scripted model's answer to one model call: tool calls, or the final text.
type Step struct {
	ToolCalls []StepCall `json:"toolCalls"`
	Text      string     `json:"text"`
}

// StepCall is one tool call the scripted model makes.
type StepCall struct {
	Key  string `json:"key"`
	Tool string `json:"tool"`
	// Arguments are sent as written, except that a ctxgraph_recall's `artifactOf` (a call
	// key) becomes `artifactId`, the artifact of that call's result.
	Arguments json.RawMessage `json:"arguments"`
}

// RecallTool is the built-in tool the server answers itself (DESIGN §7).
const RecallTool = "ctxgraph_recall"

// ToolOutput is what the client posts as a call's result, without memories: Result as
// written, or a body Generate makes.
type ToolOutput struct {
	// Status is one of the result statuses; empty means succeeded.
	Status       string          `json:"status"`
	Result       json.RawMessage `json:"result"`
	Generate     *Generator      `json:"generate"`
	Error        json.RawMessage `json:"error"`
	PrivacyClass string          `json:"privacyClass"`
	Visibility   string          `json:"visibility"`
	// SharedWith are participant keys.
	SharedWith []string `json:"sharedWith"`
}

// Generator makes a large result deterministically so that files stay small: an object
// with Head's fields (in their order) and then Field, an array of Rows rows made from
// Template; or, with Lines set, a text of Lines lines made from Line.
type Generator struct {
	Head  json.RawMessage `json:"head"`
	Field string          `json:"field"`
	Rows  int             `json:"rows"`
	// Template is a row: an object whose string values expand {i}, {i4}, {h} and {d}.
	Template json.RawMessage `json:"template"`
	// Overrides replace fields of the rows they name (by index, from 0).
	Overrides map[string]json.RawMessage `json:"overrides"`
	Lines     int                        `json:"lines"`
	// Line is a text line expanding the same placeholders; LineOverrides replace whole
	// lines (by number, from 1).
	Line          string            `json:"line"`
	LineOverrides map[string]string `json:"lineOverrides"`
}

// Need is a value a turn's model call must carry.
type Need struct {
	// Value is the exact text; with ArtifactOf it is the artifact id of that call's result.
	Value      string `json:"value"`
	ArtifactOf string `json:"artifactOf"`
	// From is the call key whose result held the value, or user:<turn key>.
	From string `json:"from"`
	// At is "first" (the default: the turn's first model call) or "recall" (the model call
	// after the turn's first ctxgraph_recall step).
	At string `json:"at"`
}

// The model calls a need can name.
const (
	AtFirst  = "first"
	AtRecall = "recall"
)

// LoadConversation reads and checks one conversation file.
func LoadConversation(path string) (Conversation, error) {
	return loadFile(path, ParseConversation)
}

// ParseConversation decodes and checks a conversation document.
func ParseConversation(data []byte) (Conversation, error) {
	var c Conversation
	if err := decodeDocument(data, &c); err != nil {
		return Conversation{}, err
	}
	if len(c.Branches) == 0 {
		c.Branches = []ConversationBranch{{Key: RootBranch}}
	}
	for i := range c.Turns {
		if c.Turns[i].Branch == "" {
			c.Turns[i].Branch = RootBranch
		}
		if c.Turns[i].Participant == "" && len(c.Participants) > 0 {
			c.Turns[i].Participant = c.Participants[0].Key
		}
		for j := range c.Turns[i].Needs {
			if c.Turns[i].Needs[j].At == "" {
				c.Turns[i].Needs[j].At = AtFirst
			}
		}
	}
	if err := c.check(); err != nil {
		return Conversation{}, err
	}
	return c, nil
}

// check reports the first mistake of a conversation: a key missing or used twice, a call
// without a result, a need whose value its source does not hold, or one the turn's own
// user message already holds (it would measure nothing).
func (c Conversation) check() error {
	if c.Name == "" {
		return errors.New("name is missing")
	}
	if len(c.Participants) == 0 {
		return errors.New("participants: none")
	}
	participants, err := participantKeys(c.Participants)
	if err != nil {
		return err
	}
	for _, t := range c.Tools {
		if t.Name == RecallTool {
			return fmt.Errorf("tools: %s is the server's built-in tool, not a client's", RecallTool)
		}
	}
	turnIndex := map[string]int{}
	for i, t := range c.Turns {
		if t.Key == "" || strings.HasPrefix(t.Key, "user:") {
			return fmt.Errorf("turns[%d]: key %q is missing or invalid", i, t.Key)
		}
		if _, dup := turnIndex[t.Key]; dup {
			return fmt.Errorf("turns[%d]: key %q is used twice", i, t.Key)
		}
		turnIndex[t.Key] = i
	}
	branchStart := map[string]int{RootBranch: 0}
	for i, b := range c.Branches {
		if b.Key == RootBranch {
			continue
		}
		if _, dup := branchStart[b.Key]; dup || b.Key == "" {
			return fmt.Errorf("branches[%d]: key %q is missing or used twice", i, b.Key)
		}
		at, ok := turnIndex[b.ForkAfterTurn]
		if _, parent := branchStart[b.Parent]; !parent || !ok {
			return fmt.Errorf("branches[%d] (%s): parent %q or forkAfterTurn %q is unknown (parents come first)", i, b.Key, b.Parent, b.ForkAfterTurn)
		}
		if c.Turns[at].Branch != b.Parent {
			return fmt.Errorf("branches[%d] (%s): turn %s is on %s, not on the parent %s", i, b.Key, b.ForkAfterTurn, c.Turns[at].Branch, b.Parent)
		}
		branchStart[b.Key] = at + 1
	}

	// sources holds every call's output and user message seen so far, to check that a
	// need's value is really where it says.
	sources := map[string][]byte{}
	calls := map[string]bool{}
	// texts are the model's final answers so far: a need they restate measures nothing.
	var texts []string
	for i, t := range c.Turns {
		where := fmt.Sprintf("turns[%d] (%s)", i, t.Key)
		if start, ok := branchStart[t.Branch]; !ok || i < start {
			return fmt.Errorf("%s: branch %q is unknown or forked after this turn", where, t.Branch)
		}
		if !participants[t.Participant] {
			return fmt.Errorf("%s: participant %q is unknown", where, t.Participant)
		}
		if t.User == "" {
			return fmt.Errorf("%s: user is missing", where)
		}
		// A need names what earlier turns held: the sources as they stand before this turn.
		earlier := make(map[string][]byte, len(sources))
		for k, v := range sources {
			earlier[k] = v
		}
		sources["user:"+t.Key] = []byte(t.User)
		if err := t.checkSteps(calls, sources); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		recalls := false
		for _, s := range t.Steps {
			recalls = recalls || s.recall()
		}
		for j, n := range t.Needs {
			if (n.Value == "") == (n.ArtifactOf == "") {
				return fmt.Errorf("%s: needs[%d]: give value or artifactOf", where, j)
			}
			if n.At != AtFirst && n.At != AtRecall {
				return fmt.Errorf("%s: needs[%d]: at %q is not %s or %s", where, j, n.At, AtFirst, AtRecall)
			}
			if n.At == AtRecall && !recalls {
				return fmt.Errorf("%s: needs[%d]: at recall, but no step recalls", where, j)
			}
			if n.ArtifactOf != "" {
				if !calls[n.ArtifactOf] {
					return fmt.Errorf("%s: needs[%d]: artifactOf %q is no earlier call", where, j, n.ArtifactOf)
				}
				continue
			}
			src, ok := earlier[n.From]
			if !ok {
				return fmt.Errorf("%s: needs[%d]: from %q is no earlier call or user message", where, j, n.From)
			}
			if !bytes.Contains(src, []byte(n.Value)) {
				return fmt.Errorf("%s: needs[%d]: %q does not occur in %s", where, j, n.Value, n.From)
			}
			if strings.Contains(t.User, n.Value) {
				return fmt.Errorf("%s: needs[%d]: %q is in the turn's own user message, so it measures nothing", where, j, n.Value)
			}
			for _, text := range texts {
				if strings.Contains(text, n.Value) {
					return fmt.Errorf("%s: needs[%d]: %q is in an earlier answer %q, so it measures nothing", where, j, n.Value, text)
				}
			}
		}
		texts = append(texts, t.Steps[len(t.Steps)-1].Text)
	}
	return nil
}

// checkSteps checks a turn's steps and results, and adds each call's output to sources.
func (t Turn) checkSteps(calls map[string]bool, sources map[string][]byte) error {
	if len(t.Steps) == 0 || t.Steps[len(t.Steps)-1].Text == "" {
		return errors.New("steps: the last step must be a text")
	}
	used := map[string]bool{}
	for j, s := range t.Steps {
		if (s.Text == "") == (len(s.ToolCalls) == 0) {
			return fmt.Errorf("steps[%d]: give toolCalls or text", j)
		}
		if s.Text != "" && j != len(t.Steps)-1 {
			return fmt.Errorf("steps[%d]: only the last step is a text", j)
		}
		recall := 0
		for k, call := range s.ToolCalls {
			if call.Key == "" || calls[call.Key] || call.Tool == "" {
				return fmt.Errorf("steps[%d].toolCalls[%d]: key %q is missing or used twice, or tool is missing", j, k, call.Key)
			}
			calls[call.Key] = true
			if call.Tool == RecallTool {
				recall++
				var args struct {
					ArtifactOf string `json:"artifactOf"`
				}
				if err := json.Unmarshal(call.Arguments, &args); err != nil || !calls[args.ArtifactOf] {
					return fmt.Errorf("steps[%d].toolCalls[%d]: a recall names an earlier call as artifactOf", j, k)
				}
				continue
			}
			out, ok := t.Results[call.Key]
			if !ok {
				return fmt.Errorf("steps[%d].toolCalls[%d]: call %s has no result", j, k, call.Key)
			}
			used[call.Key] = true
			body, err := out.Body()
			if err != nil {
				return fmt.Errorf("results[%s]: %w", call.Key, err)
			}
			sources[call.Key] = body
		}
		if recall > 0 && recall != len(s.ToolCalls) {
			return fmt.Errorf("steps[%d]: a step either recalls or calls the client's tools, not both", j)
		}
	}
	for key := range t.Results {
		if !used[key] {
			return fmt.Errorf("results[%s]: no step makes that call", key)
		}
	}
	return nil
}

// recall says whether the step calls ctxgraph_recall.
func (s Step) recall() bool {
	return len(s.ToolCalls) > 0 && s.ToolCalls[0].Tool == RecallTool
}

// Body is the result the client posts: Result as written, or the generated body.
func (o ToolOutput) Body() (json.RawMessage, error) {
	switch {
	case o.Generate != nil && o.Result != nil:
		return nil, errors.New("give result or generate, not both")
	case o.Generate != nil:
		return o.Generate.body()
	}
	return o.Result, nil
}

// body makes the generated result.
func (g Generator) body() (json.RawMessage, error) {
	if g.Lines > 0 {
		lines := make([]string, g.Lines)
		for i := range lines {
			lines[i] = expand(g.Line, "line", i+1)
			if o, ok := g.LineOverrides[strconv.Itoa(i+1)]; ok {
				lines[i] = o
			}
		}
		return json.Marshal(strings.Join(lines, "\n"))
	}
	if g.Rows <= 0 {
		return nil, errors.New("generate: rows or lines must be positive")
	}
	field := g.Field
	if field == "" {
		field = "rows"
	}
	var out bytes.Buffer
	out.WriteByte('{')
	if len(g.Head) > 0 {
		// The head's fields come first, in the file's order: the raw object's inside.
		head := bytes.TrimSpace(g.Head)
		if len(head) < 2 || head[0] != '{' {
			return nil, errors.New("generate: head must be an object")
		}
		if inner := bytes.TrimSpace(head[1 : len(head)-1]); len(inner) > 0 {
			out.Write(inner)
			out.WriteByte(',')
		}
	}
	name, _ := json.Marshal(field)
	out.Write(name)
	out.WriteString(":[")
	for i := 0; i < g.Rows; i++ {
		row, err := g.row(i)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out.WriteByte(',')
		}
		out.Write(row)
	}
	out.WriteString("]}")
	var compact bytes.Buffer
	if err := json.Compact(&compact, out.Bytes()); err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	return compact.Bytes(), nil
}

// row makes row i from the template, keeping its field order, with its overrides.
func (g Generator) row(i int) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(g.Template))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("generate: template must be an object")
	}
	var over map[string]json.RawMessage
	if o, ok := g.Overrides[strconv.Itoa(i)]; ok {
		if err := json.Unmarshal(o, &over); err != nil {
			return nil, fmt.Errorf("generate: overrides[%d]: %w", i, err)
		}
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for n := 0; dec.More(); n++ {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		if o, ok := over[key]; ok {
			value = o
		} else if s := ""; json.Unmarshal(value, &s) == nil {
			value, _ = json.Marshal(expand(s, key, i))
		}
		if n > 0 {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		out.Write(k)
		out.WriteByte(':')
		out.Write(value)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// expand replaces the placeholders of s for row (or line) i of the field named seed: {i}
// the index, {i4} the index in four digits, {h} eight hex digits and {d} an amount between
// 10.00 and 9999.99, both derived from the seed and the index.
func expand(s, seed string, i int) string {
	if !strings.Contains(s, "{") {
		return s
	}
	sum := sha256.Sum256([]byte(seed + "/" + strconv.Itoa(i)))
	amount := 1000 + (int(sum[4])<<16|int(sum[5])<<8|int(sum[6]))%999000
	return strings.NewReplacer(
		"{i4}", fmt.Sprintf("%04d", i),
		"{i}", strconv.Itoa(i),
		"{h}", hex.EncodeToString(sum[:4]),
		"{d}", fmt.Sprintf("%d.%02d", amount/100, amount%100),
	).Replace(s)
}
