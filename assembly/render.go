package assembly

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

// draft is an assembly as the budget shapes it: copies of the verdicts of a judgement that
// the budget may change (j.budgeted: the included records and the duplicates it may
// revive), of their texts and of their costs, and the request rendered from them as they
// stand. The judgement's other verdicts stay as judged.
type draft struct {
	verdicts []policy.Verdict
	texts    []string
	costs    []int
	// forms are the forms texts were rendered in.
	forms    []lineForm
	provider string
	raw      map[string]model.ArtifactRaw
	names    map[string]string
	head     string
	rounds   *rounds
	tk       *Tokenizer
	// self is the participant the request is for, whose own answers go unnamed.
	self string
	// lead is the instructions message the request starts with.
	lead lead
	// messages and included are the last rendering, sections its tokens, took the time
	// spent rendering.
	messages []model.ChatMessage
	included []model.IncludedItem
	sections model.TokenSections
	took     time.Duration
	// summary is the line of aggregated recovery of the last rendering.
	summary summaryLine
}

// summaryLine is the line that counts the aggregated recovery items, kept with the
// positions of the items it counts: the budget renders the draft again after each change,
// and the items aggregated rarely change between two renderings.
type summaryLine struct {
	of   []int
	text string
}

// counting returns the line counting the aggregated verdicts at positions idx.
func (s *summaryLine) counting(verdicts []policy.Verdict, idx []int) string {
	if s.of == nil || !slices.Equal(s.of, idx) {
		items := make([]policy.Verdict, len(idx))
		for n, i := range idx {
			items[n] = verdicts[i]
		}
		s.of, s.text = slices.Clone(idx), aggregateLine(items)
	}
	return s.text
}

func newDraft(j *judgement, req model.AssemblyRequest, names map[string]string, tk *Tokenizer) draft {
	n := len(j.budgeted)
	d := draft{verdicts: make([]policy.Verdict, n), texts: slices.Clone(j.texts), costs: slices.Clone(j.costs),
		forms: make([]lineForm, n), provider: req.Provider, raw: j.raw, names: names, head: header(req.Now), tk: tk,
		self: unnamedSpeaker(req.ParticipantID, req.RuntimeKind)}
	for k, i := range j.budgeted {
		d.verdicts[k] = *j.verdicts[i]
		d.forms[k] = formOf(j.verdicts[i])
	}
	if req.ToolRounds {
		d.rounds = &rounds{all: j.verdicts, judged: j.judged, budgeted: j.budgeted, provider: req.Provider, raw: j.raw, recall: req.Recall}
	}
	return d
}

// unnamedSpeaker is the participant whose own answers a request sends unnamed: the one it is
// for, except in a discussion, where every message names its participant (DESIGN §3).
func unnamedSpeaker(participantID string, runtimeKind model.RuntimeKind) string {
	if runtimeKind == model.RuntimeDiscussion {
		return ""
	}
	return participantID
}

// measure renders the draft as it stands and counts the request's tokens (policy.Fit's
// measure): the lines whose form the budget changed are rendered again, the others keep
// the judgement's text.
func (d *draft) measure() int {
	start := time.Now()
	rerender(d.verdicts, d.texts, d.forms, d.provider, d.raw, d.names)
	d.messages, d.included = render(d.lead, d.verdicts, d.texts, d.head, d.rounds, d.self, &d.summary)
	d.sections = Sections(d.tk, d.messages, d.lead.message != nil)
	d.took += time.Since(start)
	return d.sections.Total()
}

// lead is the system message of instructions a request starts with (DESIGN §8): the same
// text always renders the same first message, so that a provider's prompt cache keeps the
// prefix. A request without instructions has none.
type lead struct {
	message  *model.ChatMessage
	included []model.IncludedItem
	tokens   int
	sha256   string
}

// leadOf renders the instructions of a snapshot as the lead message, with the decisions
// that include them.
func leadOf(ins []model.Instructions, tk *Tokenizer) (lead, []model.Decision) {
	text, decisions := policy.Instructions(ins)
	if text == "" {
		return lead{}, nil
	}
	l := lead{message: &model.ChatMessage{Role: "system", Content: text}, tokens: MessageTokens(tk, "system", text, "")}
	sum := sha256.Sum256([]byte(text))
	l.sha256 = hex.EncodeToString(sum[:])
	for _, d := range decisions {
		l.included = append(l.included, model.IncludedItem{Ref: d.Ref, Type: d.Type, As: d.As})
	}
	return l, decisions
}

// render builds the provider messages: the instructions, one system message holding the
// context block, then the window messages in lineage order. It also lists what was
// included, in that order. summary keeps the line of aggregated recovery between renderings.
func render(first lead, verdicts []policy.Verdict, texts []string, head string, rs *rounds, self string, summary *summaryLine) ([]model.ChatMessage, []model.IncludedItem) {
	blocks, window, calls, member := sections(verdicts, rs)
	inOrder := func(idx []int, section func(policy.Verdict) int) {
		sort.SliceStable(idx, func(x, y int) bool {
			a, b := verdicts[idx[x]], verdicts[idx[y]]
			if sa, sb := section(a), section(b); sa != sb {
				return sa < sb
			}
			if a.Candidate.Depth != b.Candidate.Depth {
				return a.Candidate.Depth > b.Candidate.Depth
			}
			if a.Candidate.Seq != b.Candidate.Seq {
				return a.Candidate.Seq < b.Candidate.Seq
			}
			return a.Candidate.ID < b.Candidate.ID
		})
	}
	inOrder(blocks, contextSection)
	inOrder(window, func(policy.Verdict) int { return 0 })

	msgs := []model.ChatMessage{}
	included := []model.IncludedItem{}
	if first.message != nil {
		msgs = append(msgs, *first.message)
		included = append(included, first.included...)
	}
	if len(blocks) > 0 {
		lines := make([]string, 0, len(blocks))
		var aggregated []int
		at := -1
		clocked := false
		for _, i := range blocks {
			clocked = clocked || policy.Clocked(&verdicts[i])
			switch {
			case verdicts[i].CarriesAnswer:
				// Shown in its call's recovery line.
			case verdicts[i].Aggregated:
				// Counted in one summary line, where the first of them stands.
				if at < 0 {
					at = len(lines)
					lines = append(lines, "")
				}
				aggregated = append(aggregated, i)
			default:
				lines = append(lines, texts[i])
			}
			included = append(included, model.IncludedItem{Ref: verdicts[i].Candidate.ID, Type: verdicts[i].Candidate.Type, As: verdicts[i].Decision.As})
		}
		if at >= 0 {
			lines[at] = summary.counting(verdicts, aggregated)
		}
		// Every line ends with its newline, as lineTokens prices it. The heading, the
		// clock the lines were judged by, is there only for lines read against it.
		content := ""
		if clocked {
			content = head + "\n"
		}
		if len(lines) > 0 {
			content += strings.Join(lines, "\n") + "\n"
		}
		msgs = append(msgs, model.ChatMessage{Role: "system", Content: content})
	}
	for _, i := range window {
		msgs = append(msgs, chatMessage(verdicts[i].Candidate, self))
		included = append(included, model.IncludedItem{Ref: verdicts[i].Candidate.ID, Type: verdicts[i].Candidate.Type, As: verdicts[i].Decision.As})
	}
	if len(calls) > 0 {
		msgs, included = rs.render(verdicts, texts, calls, member, msgs, included)
	}
	return msgs, included
}

// sections sorts the included records by where the request shows them: in the context
// block, in the window, or in a tool round (calls, and member: each record of a round by
// its call's index).
func sections(verdicts []policy.Verdict, rs *rounds) (blocks, window, calls []int, member map[int]int) {
	if rs != nil {
		calls, member = rs.roundMembers(verdicts)
	}
	for i := range verdicts {
		vd := &verdicts[i]
		_, inRound := member[i]
		switch {
		case !vd.Included():
		case inRound || (vd.Candidate.Type == model.TypeToolCall && vd.Decision.As == model.AsMessage):
			// Sent in its tool round, after the window.
		case vd.Candidate.Type == model.TypeMessage && vd.Decision.As == model.AsMessage:
			window = append(window, i)
		default:
			blocks = append(blocks, i)
		}
	}
	return blocks, window, calls, member
}

// conflictSide says whether an included record is a memory that the budget may show as a
// side of a conflict or as a lone memory (policy's markConflicts).
func conflictSide(vd *policy.Verdict) bool {
	return vd.Included() && vd.Candidate.Type == model.TypeMemory && len(vd.Candidate.Memory.ConflictsWith) > 0 &&
		(vd.Decision.As == model.AsMemory || vd.Decision.As == model.AsConflict)
}

// inBlock says which of the budgeted records (each as if included) the context block would
// show: the others are messages and the records of tool rounds.
func inBlock(budgeted []policy.Verdict, rs *rounds) []bool {
	blocks, _, _, _ := sections(budgeted, rs)
	out := make([]bool, len(budgeted))
	for _, k := range blocks {
		out[k] = true
	}
	return out
}

// contextSection orders the context block: runtime state, then unresolved tool state, then
// exact evidence, then memories.
func contextSection(vd policy.Verdict) int {
	switch vd.Decision.As {
	case model.AsSkills:
		return 0
	case model.AsCheckpoint:
		return 1
	case model.AsRecovery:
		return 2
	case model.AsRaw, model.AsReference:
		return 3
	}
	return 4
}

// lineForm is what the budget can change of how a context record is rendered: whether it
// is included, its form, and whether a recovery item is compact. Everything else a line
// shows was settled by the judge (contextLine).
type lineForm struct {
	included bool
	as       string
	compact  bool
}

func formOf(vd *policy.Verdict) lineForm {
	return lineForm{included: vd.Included(), as: vd.Decision.As, compact: vd.Compact}
}

// rerender refreshes the text of every included context record whose form the budget
// changed since its text was rendered (forms[i]): a revived duplicate, a conflict side that
// became a lone survivor, a recovery item made compact. The others keep the judgement's
// text, which the same verdict in the same form renders to.
func rerender(verdicts []policy.Verdict, texts []string, forms []lineForm, provider string, raw map[string]model.ArtifactRaw, names map[string]string) {
	for i := range verdicts {
		vd := &verdicts[i]
		if !vd.Included() || vd.Candidate.Type == model.TypeMessage {
			continue
		}
		if f := formOf(vd); f != forms[i] {
			texts[i] = contextLine(*vd, provider, raw, names)
			forms[i] = f
		}
	}
}
