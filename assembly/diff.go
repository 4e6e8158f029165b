package assembly

import (
	"context"
	"reflect"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

// Diff computes a recorded assembly's snapshot under another policy version and compares
// it, record by record, with the same snapshot under the recorded version: the request, the
// budget, now and asOf stay; only the rules change. Both sides are computed afresh by this
// assembler (the recorded side as replay computes it), so that the diff shows what the
// versions decide, never a difference of assembler code. It records nothing.
func (s *Service) Diff(ctx context.Context, accountID, assemblyID, policyVersion string) (model.AssemblyDiff, error) {
	rec, err := s.Graph.Assembly(ctx, accountID, assemblyID)
	if err != nil {
		return model.AssemblyDiff{}, err
	}
	other, err := s.Policies.Resolve(ctx, accountID, policyVersion)
	if err != nil {
		return model.AssemblyDiff{}, err
	}
	recorded, err := s.recompute(ctx, accountID, rec, false)
	if err != nil {
		return model.AssemblyDiff{}, err
	}
	req := recorded.Request
	req.PolicyVersion = other.ID
	again, err := s.compute(ctx, accountID, req, model.SnapshotOptions{}, other)
	if err != nil {
		return model.AssemblyDiff{}, err
	}
	d := DiffAssemblies(recorded, again)
	d.AssemblyID = assemblyID
	return d, nil
}

// DiffAssemblies compares two assemblies of one snapshot, each computed with a trace (so
// that every record it left out is listed), record by record. Records outside the lineage
// are left out of the list: no policy version decides them.
func DiffAssemblies(recorded, other model.Assembly) model.AssemblyDiff {
	was, order := outcomesOf(recorded, nil)
	now, order := outcomesOf(other, order)
	d := model.AssemblyDiff{
		Now: recorded.Request.Now, AsOf: recorded.Request.AsOf, Changes: map[string]int{}, Records: []model.RecordChange{},
		Recorded: sideOf(recorded), Other: sideOf(other),
	}
	for _, c := range model.RecordChanges {
		d.Changes[c] = 0
	}
	// The records either request sent first, each in its order, then the rest.
	var sent, rest []model.RecordChange
	for _, ref := range order {
		a, b := was[ref], now[ref]
		c := model.RecordChange{Ref: ref, Type: a.typ, Change: changeOf(a.RecordOutcome, b.RecordOutcome), Recorded: a.RecordOutcome, Other: b.RecordOutcome}
		if c.Type == "" {
			c.Type = b.typ
		}
		if c.Recorded.Outcome == "" {
			c.Recorded.Outcome = policy.OutcomeOmitted
		}
		if c.Other.Outcome == "" {
			c.Other.Outcome = policy.OutcomeOmitted
		}
		d.Changes[c.Change]++
		if c.Recorded.Outcome == policy.OutcomeIncluded || c.Other.Outcome == policy.OutcomeIncluded {
			sent = append(sent, c)
		} else {
			rest = append(rest, c)
		}
	}
	d.Records = append(append(d.Records, sent...), rest...)
	d.Identical = d.Changes[model.ChangeNone] == len(d.Records) && reflect.DeepEqual(recorded.Messages, other.Messages) &&
		recorded.Tokens.Assembled == other.Tokens.Assembled
	return d
}

// judged is one assembly's outcome for a record, with the record's type.
type judged struct {
	model.RecordOutcome
	typ model.RecordType
}

// outcomesOf reads what an assembly decided about each record it judged, and appends to
// order the refs it has not seen yet: the included ones in the request's order first.
func outcomesOf(a model.Assembly, order []string) (map[string]judged, []string) {
	out := map[string]judged{}
	seen := map[string]bool{}
	for _, ref := range order {
		seen[ref] = true
	}
	add := func(ref string) {
		if !seen[ref] {
			seen[ref] = true
			order = append(order, ref)
		}
	}
	for _, inc := range a.Included {
		add(inc.Ref)
	}
	for dec := range a.AllDecisions() {
		if dec.Reason == model.ReasonBranchIneligible {
			continue
		}
		j := out[dec.Ref]
		if j.Outcome == policy.OutcomeIncluded && dec.Outcome != policy.OutcomeIncluded {
			continue // a later decision about an included record's parts never undoes it
		}
		out[dec.Ref] = judged{RecordOutcome: model.RecordOutcome{Outcome: dec.Outcome, As: dec.As, Reason: dec.Reason, Rule: dec.Rule}, typ: dec.Type}
		add(dec.Ref)
	}
	for _, inc := range a.Included {
		j := out[inc.Ref]
		j.Outcome, j.As, j.Reason = policy.OutcomeIncluded, inc.As, ""
		if j.typ == "" {
			j.typ = inc.Type
		}
		out[inc.Ref] = j
	}
	return out, order
}

// changeOf names how a record fares under the other version than under the recorded one.
func changeOf(was, now model.RecordOutcome) string {
	in, stays := was.Outcome == policy.OutcomeIncluded, now.Outcome == policy.OutcomeIncluded
	switch {
	case in && !stays:
		return model.ChangeOnlyRecorded
	case !in && stays:
		return model.ChangeOnlyOther
	case in && (was.As != now.As || was.Rule != now.Rule):
		return model.ChangeForm
	case !in && was.Reason != now.Reason:
		return model.ChangeForm
	}
	return model.ChangeNone
}

func sideOf(a model.Assembly) model.DiffSide {
	return model.DiffSide{PolicyVersion: a.PolicyVersion, Tokens: a.Tokens, Omitted: a.Omitted, Messages: a.Messages}
}
