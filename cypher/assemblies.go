package cypher

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/ctxgraph/ctxgraph/model"
)

var _ model.AssemblyGraph = (*Store)(nil)

// RawPayloads reads the exact payloads of artifacts that a policy selected for rehydration,
// verified against their hashes.
func (s *Store) RawPayloads(ctx context.Context, accountID string, artifactIDs []string) (map[string]model.ArtifactRaw, error) {
	out := map[string]model.ArtifactRaw{}
	if len(artifactIDs) == 0 {
		return out, nil
	}
	found, err := s.locate(ctx, accountID, artifactIDs...)
	if err != nil {
		return nil, err
	}
	for _, id := range artifactIDs {
		rec, ok := found[id]
		if !ok || rec.Label != "ToolArtifact" {
			continue
		}
		a := artifactOf(rec.Props)
		if a.RedactedAt != nil {
			// Redacted since the policy judged it: nothing of it goes.
			continue
		}
		raw := model.ArtifactRaw{ArtifactID: id, Error: a.Error}
		if raw.Arguments, err = s.restore(ctx, rec.Props, "args", "argsRef", "argsSha256"); err != nil {
			return nil, err
		}
		if raw.Result, err = s.restore(ctx, rec.Props, "result", "resultRef", "resultSha256"); err != nil {
			return nil, err
		}
		out[id] = raw
	}
	return out, nil
}

// recordAssemblies writes the records of assemblies (batchParams' rows, see RecordAssembly).
var recordAssemblies = newQuery[batchParams, recordAssembliesRow]("RecordAssemblies")

// recordAssembliesRow is one assembly written: its row and id.
type recordAssembliesRow struct {
	I  int64  `col:"i"`
	ID string `col:"id"`
}

// RecordAssembly writes the assembly (record is its JSON, model.EncodeJSON, which the
// response reuses), its INCLUDED edges and its policy decisions in one transaction, which
// may also write the records of other assemblies made at the same time (groupCommit); it
// returns once the record has committed.
func (s *Store) RecordAssembly(ctx context.Context, accountID string, a model.Assembly, record []byte) error {
	// One PolicyDecision per distinct decision (record type, kind, outcome, form, reason
	// and rule), ABOUT every record it was made for: the same rule applied to many records
	// is one node, not one per record, and the same decision made again by a later assembly
	// is the same node (decisionID).
	var decided []*decisionGroup
	groups := map[[6]string]*decisionGroup{}
	// The decisions budgeted for the request, and the settled ones the judgement found
	// stored: not a.AllDecisions, which yields every settled decision, tens of thousands
	// late in a long conversation, on the path every assembly waits for.
	group := func(d *model.Decision) {
		key := [6]string{string(d.Type), string(d.Policy), d.Outcome, d.As, d.Reason, string(d.Rule)}
		g, ok := groups[key]
		if !ok {
			g = &decisionGroup{key: key}
			groups[key] = g
			decided = append(decided, g)
		}
		g.refs = append(g.refs, d.Ref)
	}
	for i := range a.Decisions {
		if d := &a.Decisions[i]; d.Stored() {
			group(d)
		}
	}
	for _, d := range a.SettledStored {
		group(d)
	}
	refs := make([]string, 0, len(a.Included)+len(a.OmittedRefs))
	for _, inc := range a.Included {
		// Instructions are properties of the conversation and the participant, recorded
		// by their sha256 (instructionsSha256), not as records of the lineage.
		if inc.As != model.AsInstructions {
			refs = append(refs, inc.Ref)
		}
	}
	for _, g := range decided {
		refs = append(refs, g.refs...)
	}
	for _, o := range a.OmittedRefs {
		refs = append(refs, o.Ref)
	}
	eids, err := s.elementIDs(ctx, accountID, a.ConversationID, refs)
	if err != nil {
		return err
	}
	included := make([]map[string]any, 0, len(a.Included))
	for i, inc := range a.Included {
		// A record found nowhere (deleted since it was read) is not linked.
		if eid := eids[inc.Ref]; eid != "" {
			included = append(included, map[string]any{"ref": inc.Ref, "eid": eid, "as": inc.As, "position": i})
		}
	}
	decisions := make([]map[string]any, 0, len(decided))
	for _, g := range decided {
		// The element ids go beside the refs, one each (null for a record found nowhere):
		// only the assembly that writes the decision links them, and a list of strings
		// costs far less to build and send than a map per record.
		refEids := make([]any, len(g.refs))
		for k, ref := range g.refs {
			refEids[k] = nullable(eids[ref])
		}
		decisions = append(decisions, map[string]any{
			"id": decisionID(accountID, a.ConversationID, a.PolicyVersion, g.key, g.refs), "refs": g.refs, "eids": refEids,
			"kind": g.key[1], "outcome": g.key[2], "as": nullable(g.key[3]), "reason": g.key[4], "rule": g.key[5]})
	}
	// A traced assembly links every record it left out, with the reason and the rule, so
	// that "why did the model not see X" is a Cypher query; every assembly carries its
	// counts by reason (omittedWindow, ...), 0 included.
	omitted := []map[string]any{}
	if len(a.OmittedRefs) > 0 {
		rules := make(map[string]model.Rule, len(a.OmittedRefs))
		for d := range a.AllDecisions() {
			rules[d.Ref] = d.Rule
		}
		for _, o := range a.OmittedRefs {
			rule := rules[o.Ref]
			if rule == "" && o.Reason == model.ReasonBranchIneligible {
				rule = model.RuleBranchLineage
			}
			if eid := eids[o.Ref]; eid != "" {
				omitted = append(omitted, map[string]any{"ref": o.Ref, "eid": eid, "reason": o.Reason, "rule": string(rule)})
			}
		}
	}
	counts := make(map[string]any, len(model.OmissionReasons))
	for _, reason := range model.OmissionReasons {
		counts[model.OmittedCountProperty(reason)] = a.Omitted[reason]
	}
	req := a.Request
	row := map[string]any{
		"id": a.ID, "conversationId": a.ConversationID, "branchId": req.BranchID,
		"participantId": req.ParticipantID, "runId": nullable(req.RunID), "runtimeKind": string(req.RuntimeKind),
		"provider": req.Provider, "model": nullable(req.Model), "tokenBudget": req.TokenBudget,
		"exactArtifactIds": orEmpty(req.ExactArtifactIDs), "policyVersion": a.PolicyVersion,
		"assemblerVersion": a.AssemblerVersion, "now": req.Now.UTC(), "asOf": req.AsOf.UTC(), "trace": req.Trace,
		"assembledTokens": a.Tokens.Assembled, "baselineTokens": a.Tokens.Baseline, "record": string(record),
		"instructionsSha256": nullable(a.InstructionsSha256),
		"recordedAt":         a.CreatedAt.UTC(), "included": included, "decisions": decisions,
		"omittedCounts": counts, "omitted": omitted,
		"recordState": recordState(a.Keeping), "recordKept": nullable(a.Keeping.Kept), "keepPerBranch": a.Keeping.KeepPerBranch,
	}
	var rec *neo4j.Record
	if keyed(ctx) {
		// A keyed request's record is written alone, with its response: the record.
		rec, err = writeTx(ctx, s, func(t *tx) (*neo4j.Record, error) {
			rec, err := t.oneRow(recordAssemblies, accountID, row)
			if err != nil || rec == nil {
				return rec, err
			}
			return rec, t.answerRecord(json.RawMessage(record), a.ConversationID, "", a.ID)
		})
	} else {
		rec, err = s.assemblyRecords.write(ctx, s, accountID, row)
	}
	if err == nil && rec == nil {
		// Nothing written: the conversation was not found (deleted, or not this account's).
		err = model.NotFound("conversation", a.ConversationID)
	}
	if err == nil {
		var written recordAssembliesRow
		err = recordAssemblies.scan(rec, &written)
	}
	return err
}

// decisionGroup is one stored PolicyDecision of an assembly: its key (record type, kind,
// outcome, form, reason, rule) and the records it was made for.
type decisionGroup struct {
	key  [6]string
	refs []string
}

// elementIDs returns the element ids of records an assembly links: from the assembler's
// copy of the conversation, which read them a moment ago, and for any it does not hold (no
// cache, a fresh read, a copy dropped since) from the graph.
func (s *Store) elementIDs(ctx context.Context, accountID, conversationID string, refs []string) (map[string]string, error) {
	out := make(map[string]string, len(refs))
	missing := refs
	if c := s.records.LookupConversation(accountID, conversationID); c != nil {
		missing = c.ElementIDs(refs, out)
	}
	if len(missing) == 0 {
		return out, nil
	}
	found, err := readTx(ctx, s, func(t *tx) (map[string]located, error) { return t.locate(accountID, missing...) })
	if err != nil {
		return nil, err
	}
	for id, loc := range found {
		out[id] = loc.ElementID
	}
	return out, nil
}

// decisionID names a policy decision by what it is: the account and conversation it was made
// in, the policy version, the record type, kind, outcome, form, reason and rule, and the
// records it was made for, in order. Assemblies that make the same decision share its node.
func decisionID(accountID, conversationID, policyVersion string, key [6]string, refs []string) string {
	h := sha256.New()
	for _, part := range [][]string{{accountID, conversationID, policyVersion}, key[:], refs} {
		for _, s := range part {
			h.Write([]byte(s))
			h.Write([]byte{0})
		}
		h.Write([]byte{1})
	}
	return "pd_" + hex.EncodeToString(h.Sum(nil)[:16])
}

// The statements that read a recorded assembly.
var (
	readAssembly = newQuery[idParams, struct {
		A         props `col:"a"`
		Decisions []any `col:"decisions"`
	}]("ReadAssembly")
	assemblyTokens = newQuery[idParams, struct {
		Assembled int64 `col:"assembled"`
		Baseline  int64 `col:"baseline"`
	}]("AssemblyTokens")
	includedEdges = newQuery[idParams, struct {
		Ref      string `col:"ref"`
		As       string `col:"as"`
		Position int64  `col:"position"`
	}]("IncludedEdges")
	decisionEdges = newQuery[idParams, struct {
		Ref     string `col:"ref"`
		Kind    string `col:"kind"`
		Outcome string `col:"outcome"`
		As      string `col:"as"`
		Reason  string `col:"reason"`
		Rule    string `col:"rule"`
	}]("DecisionEdges")
	provenancePath = newQuery[refParams, struct {
		Steps []any `col:"steps"`
	}]("ProvenancePath")
)

// refParams name a record of an account that may be of any label.
type refParams struct {
	Ref       string `param:"ref"`
	AccountID string `param:"accountId"`
}

// Assembly reads a recorded assembly with its stored policy decisions.
func (s *Store) Assembly(ctx context.Context, accountID, id string) (model.Assembly, error) {
	return readTx(ctx, s, func(t *tx) (model.Assembly, error) {
		row, found, err := readAssembly.one(t, idParams{ID: id, AccountID: accountID})
		if err != nil {
			return model.Assembly{}, err
		}
		if !found {
			return model.Assembly{}, model.NotFound("assembly", id)
		}
		if row.A.str("recordState") == recordTrimmed {
			return model.Assembly{}, trimmedRecord(id, row.A)
		}
		var a model.Assembly
		if err := json.Unmarshal([]byte(row.A.str("record")), &a); err != nil {
			return model.Assembly{}, model.Internal("decoding the assembly record", err)
		}
		for _, v := range row.Decisions {
			d := asProps(v)
			for _, ref := range d.strs("refs") {
				a.Decisions = append(a.Decisions, model.Decision{
					Ref: ref, Policy: model.Policy(d.str("kind")), Outcome: d.str("outcome"), As: d.str("as"),
					Reason: d.str("reason"), Rule: model.Rule(d.str("rule")),
				})
			}
		}
		return a, nil
	})
}

// AssemblyTokens reads the token totals a recorded assembly counted: see
// model.GenerationGraph.
func (s *Store) AssemblyTokens(ctx context.Context, accountID, id string) (model.GenerationTokens, error) {
	return readTx(ctx, s, func(t *tx) (model.GenerationTokens, error) {
		row, found, err := assemblyTokens.one(t, idParams{ID: id, AccountID: accountID})
		if err != nil {
			return model.GenerationTokens{}, err
		}
		if !found {
			return model.GenerationTokens{}, model.NotFound("assembly", id)
		}
		return model.GenerationTokens{Assembled: int(row.Assembled), Baseline: int(row.Baseline)}, nil
	})
}

// IncludedEdges reads the INCLUDED edges of an assembly from the graph, in position order:
// what Browser readers see of it, which must agree with its record's included list.
func (s *Store) IncludedEdges(ctx context.Context, accountID, id string) ([]model.IncludedItem, error) {
	return readTx(ctx, s, func(t *tx) ([]model.IncludedItem, error) {
		rows, err := includedEdges.all(t, idParams{ID: id, AccountID: accountID})
		if err != nil {
			return nil, err
		}
		out := make([]model.IncludedItem, len(rows))
		for i, r := range rows {
			out[i] = model.IncludedItem{Ref: r.Ref, As: r.As}
		}
		return out, nil
	})
}

// DecisionEdges reads the stored policy decisions that constrain an assembly from the graph,
// one per record a decision is ABOUT: what Browser readers see of them, which must agree with
// the refs each decision lists.
func (s *Store) DecisionEdges(ctx context.Context, accountID, id string) ([]model.Decision, error) {
	return readTx(ctx, s, func(t *tx) ([]model.Decision, error) {
		rows, err := decisionEdges.all(t, idParams{ID: id, AccountID: accountID})
		if err != nil {
			return nil, err
		}
		out := make([]model.Decision, len(rows))
		for i, r := range rows {
			out[i] = model.Decision{Ref: r.Ref, Policy: model.Policy(r.Kind), Outcome: r.Outcome, As: r.As, Reason: r.Reason, Rule: model.Rule(r.Rule)}
		}
		return out, nil
	})
}

// ProvenancePath walks from a record to the participant behind it. A memory whose source
// artifact was deleted shows the missing artifact as a step named "missing": the id it was
// derived from, never a substitute; one whose body was redacted by retention, as a step
// named "redacted".
func (s *Store) ProvenancePath(ctx context.Context, accountID, ref string) ([]model.PathStep, error) {
	return readTx(ctx, s, func(t *tx) ([]model.PathStep, error) {
		rows, err := provenancePath.all(t, refParams{Ref: ref, AccountID: accountID})
		if err != nil {
			return nil, err
		}
		if len(rows) == 0 {
			return nil, model.NotFound("record", ref)
		}
		var steps []model.PathStep
		seen := map[string]bool{}
		var sources []string
		longest := len(rows[0].Steps)
		for _, r := range rows {
			nodes := r.Steps
			if len(nodes) < longest && longest > 1 {
				continue
			}
			for _, v := range nodes {
				n := asProps(v)
				if len(steps) == 0 {
					sources = n.strs("sources")
				}
				if seen[n.str("id")] {
					continue
				}
				seen[n.str("id")] = true
				steps = append(steps, model.PathStep{Type: n.str("type"), ID: n.str("id"), Name: n.str("name"), Locators: n.strs("locators")})
			}
		}
		for _, src := range sources {
			if !seen[src] {
				steps = append(steps, model.PathStep{Type: "ToolArtifact", ID: src, Name: "missing"})
			}
		}
		return steps, nil
	})
}

var (
	runModelCalls = newQuery[idParams, struct {
		RunID string `col:"runId"`
		Calls []any  `col:"calls"`
	}]("RunModelCalls")
	sentRequest = newQuery[idParams, struct {
		A props `col:"a"`
	}]("SentRequest")
)

var _ model.ModelCallReader = (*Store)(nil)

// RunModelCalls lists the model calls of a run: see model.ModelCallReader.
func (s *Store) RunModelCalls(ctx context.Context, accountID, runID string) (model.RunModelCalls, error) {
	row, found, err := runModelCalls.autoOne(ctx, s, neo4j.AccessModeRead, idParams{ID: runID, AccountID: accountID})
	if err != nil {
		return model.RunModelCalls{}, err
	}
	if !found {
		return model.RunModelCalls{}, model.NotFound("run", runID)
	}
	out := model.RunModelCalls{RunID: row.RunID, ModelCalls: make([]model.ModelCall, 0, len(row.Calls))}
	for _, v := range row.Calls {
		a := asProps(v)
		out.ModelCalls = append(out.ModelCalls, model.ModelCall{
			AssemblyID: a.str("id"), CreatedAt: a.time("createdAt"), PolicyVersion: a.str("policyVersion"),
			Tokens:        model.TokenCounts{Assembled: int(a.i64("assembledTokens")), Baseline: int(a.i64("baselineTokens")), Budget: int(a.i64("tokenBudget"))},
			RequestSha256: a.str("requestSha256"), RequestKept: a.boolean("hasRequest"), RecordState: a.str("recordState"),
		})
	}
	return out, nil
}

// SentRequest reads the exact request body an assembly's model call sent: see
// model.ModelCallReader.
func (s *Store) SentRequest(ctx context.Context, accountID, assemblyID string) (model.SentRequest, error) {
	row, found, err := sentRequest.autoOne(ctx, s, neo4j.AccessModeRead, idParams{ID: assemblyID, AccountID: accountID})
	if err != nil {
		return model.SentRequest{}, err
	}
	if !found {
		return model.SentRequest{}, model.NotFound("assembly", assemblyID)
	}
	if row.A.str("recordState") == recordTrimmed {
		return model.SentRequest{}, trimmedRecord(assemblyID, row.A)
	}
	body := row.A.str("requestBody")
	if body == "" {
		e := model.NotFound("request of assembly", assemblyID)
		e.Message += ": it sent none to a provider (assembled by POST /v1/assemblies, or its call failed before sending)"
		return model.SentRequest{}, e
	}
	return model.SentRequest{AssemblyID: assemblyID, RequestSha256: row.A.str("requestSha256"), Body: []byte(body)}, nil
}

// trimmedBy says, for each recordTrimmed but the records-keeping sweep's, what took the
// record.
var trimmedBy = map[string]string{
	"redacted_artifact": "an artifact it included raw was redacted at the end of its retention (DESIGN §10)",
	"deleted_artifact":  "an artifact it included raw was deleted at the end of its retention (DESIGN §10)",
	"erased_artifact":   "an artifact it included raw was erased (POST /v1/artifacts/{id}/erase)",
}

// trimmedRecord is the error of a read of an assembly whose full record was trimmed
// (DESIGN §10), naming why (recordTrimmed).
func trimmedRecord(id string, a props) error {
	at := a.time("recordTrimmedAt").Format(time.RFC3339)
	const counts = "; its counts stay on the ContextAssembly node"
	if why, ok := trimmedBy[a.str("recordTrimmed")]; ok {
		return model.Gone("the record of assembly %q was trimmed at %s, when %s"+counts, id, at, why)
	}
	return model.Gone("the record of assembly %q was trimmed at %s: it was no longer among the latest %d assemblies of its branch and was not sampled (records.keepPerBranch and records.sampleRate of policy version %s, DESIGN §10)"+counts,
		id, at, a.i64("keepPerBranch"), a.str("policyVersion"))
}
