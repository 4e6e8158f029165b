package assembly

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

// Explain says why a record was included in or omitted from an assembly: the stored policy
// decision where there is one, otherwise the decision recomputed by replaying the assembly
// (the same version, now and asOf decide the same way), with the record's provenance path.
func (s *Service) Explain(ctx context.Context, accountID, assemblyID, ref string) (model.Explanation, error) {
	rec, err := s.Graph.Assembly(ctx, accountID, assemblyID)
	if err != nil {
		return model.Explanation{}, err
	}
	ex := model.Explanation{AssemblyID: assemblyID, Ref: ref, PolicyVersion: rec.PolicyVersion}
	found := false
	for d := range rec.AllDecisions() {
		if d.Ref == ref {
			ex.Outcome, ex.As, ex.Reason, ex.Rule, found = d.Outcome, d.As, d.Reason, d.Rule, true
		}
	}
	if !found {
		again, err := s.recompute(ctx, accountID, rec, false)
		if err != nil {
			return model.Explanation{}, err
		}
		for d := range again.AllDecisions() {
			if d.Ref == ref {
				ex.Type, ex.Outcome, ex.As, ex.Reason, ex.Rule, found = d.Type, d.Outcome, d.As, d.Reason, d.Rule, true
			}
		}
		if !found {
			for _, o := range again.OmittedRefs {
				if o.Ref == ref {
					ex.Outcome, ex.Reason, ex.Rule, found = policy.OutcomeOmitted, o.Reason, model.RuleBranchLineage, true
				}
			}
		}
	}
	for _, inc := range rec.Included {
		if inc.Ref == ref {
			ex.Type, ex.Outcome, ex.As = inc.Type, policy.OutcomeIncluded, inc.As
		}
	}
	if !found && ex.Outcome == "" {
		e := model.NotFound("record", ref)
		e.Field = "ref"
		return model.Explanation{}, e
	}
	path, err := s.Graph.ProvenancePath(ctx, accountID, ref)
	if err != nil && model.KindOf(err) != model.KindNotFound {
		return model.Explanation{}, err
	}
	ex.ProvenancePath = path
	if ex.ProvenancePath == nil {
		ex.ProvenancePath = []model.PathStep{}
	}
	if ex.Type == "" && len(path) > 0 {
		ex.Type = typeOfLabel(path[0].Type)
	}
	return ex, nil
}

func typeOfLabel(label string) model.RecordType {
	switch label {
	case "Message":
		return model.TypeMessage
	case "ToolCall":
		return model.TypeToolCall
	case "ToolArtifact":
		return model.TypeArtifact
	case "ToolMemory":
		return model.TypeMemory
	case "Checkpoint":
		return model.TypeCheckpoint
	case "SkillState":
		return model.TypeSkills
	}
	return model.RecordType(strings.ToLower(label))
}

// recompute re-runs a recorded assembly under its recorded policy version (read from the
// versions stored for the account first, so that it replays after an upgrade changed the
// embedded ones), now and asOf, with a trace so that every omitted record is listed.
func (s *Service) recompute(ctx context.Context, accountID string, rec model.Assembly, fresh bool) (model.Assembly, error) {
	v, err := s.Policies.Recorded(ctx, accountID, rec.PolicyVersion)
	if err != nil {
		return model.Assembly{}, err
	}
	req := rec.Request
	req.Trace = true
	return s.compute(ctx, accountID, req, model.SnapshotOptions{Fresh: fresh}, v)
}

// Replay re-runs a recorded assembly and reports whether it selects the same records in the
// same order with the same forms and text, listing every difference.
func (s *Service) Replay(ctx context.Context, accountID, assemblyID string) (model.ReplayReport, error) {
	rec, err := s.Graph.Assembly(ctx, accountID, assemblyID)
	if err != nil {
		return model.ReplayReport{}, err
	}
	// A replay reads the graph afresh: it checks the assembler's cache as well as the policy.
	again, err := s.recompute(ctx, accountID, rec, true)
	if err != nil {
		return model.ReplayReport{}, err
	}
	rep := model.ReplayReport{AssemblyID: assemblyID, PolicyVersion: rec.PolicyVersion, Differences: []string{}}
	n := len(rec.Included)
	if len(again.Included) > n {
		n = len(again.Included)
	}
	for i := 0; i < n; i++ {
		var was, now model.IncludedItem
		if i < len(rec.Included) {
			was = rec.Included[i]
		}
		if i < len(again.Included) {
			now = again.Included[i]
		}
		if was != now {
			rep.Differences = append(rep.Differences, fmt.Sprintf("included[%d]: recorded %s as %s, replay %s as %s", i, orNone(was.Ref), orNone(was.As), orNone(now.Ref), orNone(now.As)))
		}
	}
	if len(rec.Messages) != len(again.Messages) {
		rep.Differences = append(rep.Differences, fmt.Sprintf("messages: recorded %d, replay %d", len(rec.Messages), len(again.Messages)))
	} else {
		for i := range rec.Messages {
			if !reflect.DeepEqual(rec.Messages[i], again.Messages[i]) {
				rep.Differences = append(rep.Differences, fmt.Sprintf("messages[%d] (%s): text differs", i, rec.Messages[i].Role))
			}
		}
	}
	if rec.InstructionsSha256 != again.InstructionsSha256 {
		rep.Differences = append(rep.Differences, fmt.Sprintf("instructions: recorded sha256 %s, replay %s", orNone(rec.InstructionsSha256), orNone(again.InstructionsSha256)))
	}
	if rec.Tokens.Assembled != again.Tokens.Assembled || rec.Tokens.Baseline != again.Tokens.Baseline {
		rep.Differences = append(rep.Differences, fmt.Sprintf("tokens: recorded %d/%d, replay %d/%d",
			rec.Tokens.Assembled, rec.Tokens.Baseline, again.Tokens.Assembled, again.Tokens.Baseline))
	}
	for _, reason := range model.OmissionReasons {
		if reason == model.ReasonBranchIneligible {
			continue
		}
		if rec.Omitted[reason] != again.Omitted[reason] {
			rep.Differences = append(rep.Differences, fmt.Sprintf("omitted %s: recorded %d, replay %d", reason, rec.Omitted[reason], again.Omitted[reason]))
		}
	}
	rep.Identical = len(rep.Differences) == 0
	return rep, nil
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

var _ model.ContextAssembler = (*Service)(nil)
