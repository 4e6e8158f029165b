package scenario

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/peers"
)

// AssemblyResponse is the answer of POST /v1/assemblies (DESIGN §5), requested with
// trace: true.
type AssemblyResponse struct {
	ID string `json:"id"`
	// Messages are the provider-ready messages, kept raw for the contains checks.
	Messages json.RawMessage `json:"messages"`
	Tokens   struct {
		Assembled int `json:"assembled"`
		Baseline  int `json:"baseline"`
		Protected int `json:"protected"`
	} `json:"tokens"`
	OverBudget       bool               `json:"overBudget"`
	Included         []IncludedRef      `json:"included"`
	Omitted          map[string]int     `json:"omitted"`
	OmittedRefs      []OmittedRef       `json:"omittedRefs"`
	PolicyVersion    string             `json:"policyVersion"`
	AssemblerVersion string             `json:"assemblerVersion"`
	TimingsMs        map[string]float64 `json:"timingsMs"`
}

// IncludedRef is one record an assembly serialised, and the form it took.
type IncludedRef = model.IncludedItem

// OmittedRef is one record an assembly left out, and why.
type OmittedRef = model.OmittedRef

// checkAssembly returns every expectation the response misses, in a stable order.
func checkAssembly(exp Expect, resp AssemblyResponse, ids *keyIndex) []string {
	var failures []string
	fail := func(format string, args ...any) { failures = append(failures, fmt.Sprintf(format, args...)) }

	includedAs := map[string][]string{}
	for _, in := range resp.Included {
		includedAs[in.Ref] = append(includedAs[in.Ref], in.As)
	}
	omittedFor := map[string][]string{}
	for _, o := range resp.OmittedRefs {
		omittedFor[o.Ref] = append(omittedFor[o.Ref], o.Reason)
	}
	// forms lists how the given ids were included, as "ref as form".
	forms := func(refs []string) []string {
		var out []string
		for _, r := range refs {
			for _, as := range includedAs[r] {
				out = append(out, r+" as "+as)
			}
		}
		return out
	}

	for _, key := range exp.Included {
		refs, ok := ids.matching(key)
		if !ok {
			fail("included %s: no record of the scenario has this key", key)
			continue
		}
		if len(forms(refs)) == 0 {
			fail("included %s: got nothing of %v included, want it included", key, refs)
		}
	}

	for _, key := range sortedKeys(exp.IncludedAs) {
		want := exp.IncludedAs[key]
		refs, ok := ids.matching(key)
		if !ok {
			fail("includedAs %s: no record of the scenario has this key", key)
			continue
		}
		found := false
		for _, r := range refs {
			for _, as := range includedAs[r] {
				found = found || as == want
			}
		}
		if !found {
			got := forms(refs)
			if len(got) == 0 {
				fail("includedAs %s: got nothing of %v included, want it included as %s", key, refs, want)
			} else {
				fail("includedAs %s: got %s, want as %s", key, strings.Join(got, ", "), want)
			}
		}
	}

	for _, key := range sortedKeys(exp.Omitted) {
		want := exp.Omitted[key]
		forbidden, reported, ok := ids.omission(key)
		if !ok {
			fail("omitted %s: no record of the scenario has this key", key)
			continue
		}
		if got := forms(forbidden); len(got) > 0 {
			fail("omitted %s: got %s included, want it omitted", key, strings.Join(got, ", "))
		}
		var reasons []string
		found := false
		for _, r := range reported {
			for _, reason := range omittedFor[r] {
				reasons = append(reasons, r+" "+reason)
				found = found || reason == want
			}
		}
		if !found {
			if len(reasons) == 0 {
				fail("omitted %s: got none of %v in omittedRefs, want reason %s", key, reported, want)
			} else {
				fail("omitted %s: got omittedRefs %s, want reason %s", key, strings.Join(reasons, ", "), want)
			}
		}
	}

	if len(exp.Contains) > 0 || len(exp.NotContains) > 0 {
		texts, err := peers.Texts(resp.Messages)
		if err != nil {
			fail("messages: %v", err)
		}
		in := func(s string) bool {
			for _, t := range texts {
				if strings.Contains(t, s) {
					return true
				}
			}
			return false
		}
		for _, s := range exp.Contains {
			if !in(s) {
				fail("contains %q: not found in the messages", s)
			}
		}
		for _, s := range exp.NotContains {
			if in(s) {
				fail("notContains %q: found in the messages", s)
			}
		}
	}

	if exp.MaxAssembledTokens != nil && resp.Tokens.Assembled > *exp.MaxAssembledTokens {
		fail("maxAssembledTokens: got %d assembled tokens, want at most %d", resp.Tokens.Assembled, *exp.MaxAssembledTokens)
	}
	if exp.OverBudget != nil && resp.OverBudget != *exp.OverBudget {
		fail("overBudget: got %v (%d assembled, %d protected), want %v", resp.OverBudget, resp.Tokens.Assembled, resp.Tokens.Protected, *exp.OverBudget)
	}
	if exp.MinReduction != nil {
		if resp.Tokens.Baseline <= 0 {
			fail("minReduction: got baseline %d, want a positive baseline to reduce by %.2f", resp.Tokens.Baseline, *exp.MinReduction)
		} else if cut := 1 - float64(resp.Tokens.Assembled)/float64(resp.Tokens.Baseline); cut < *exp.MinReduction {
			fail("minReduction: got %.3f (%d assembled of %d baseline tokens), want at least %.3f",
				cut, resp.Tokens.Assembled, resp.Tokens.Baseline, *exp.MinReduction)
		}
	}
	return failures
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// matching returns the ids an included / includedAs expectation on key accepts: the record
// itself, and for a tool call also its artifacts and every memory derived from it.
func (k *keyIndex) matching(key string) ([]string, bool) {
	if call, ok := k.calls[key]; ok {
		refs := append([]string{call}, k.artifacts[key]...)
		for _, m := range k.derivedMemories(key, false) {
			refs = append(refs, k.memories[m])
		}
		return refs, true
	}
	return k.single(key)
}

// omission returns, for an omitted expectation on key, the ids that must not be included
// and the ids of which one must be reported in omittedRefs. For a tool call: neither the
// call, its artifacts nor a memory derived only from it may be included, and the call or
// one of its artifacts must be reported.
func (k *keyIndex) omission(key string) (forbidden, reported []string, ok bool) {
	if call, ok := k.calls[key]; ok {
		reported = append([]string{call}, k.artifacts[key]...)
		forbidden = append([]string(nil), reported...)
		for _, m := range k.derivedMemories(key, true) {
			forbidden = append(forbidden, k.memories[m])
		}
		return forbidden, reported, true
	}
	refs, ok := k.single(key)
	return refs, refs, ok
}

// single resolves a key naming a message, memory, checkpoint or promoted report.
func (k *keyIndex) single(key string) ([]string, bool) {
	for _, m := range []map[string]string{k.messages, k.memories, k.checkpoints, k.reports} {
		if id, ok := m[key]; ok {
			return []string{id}, true
		}
	}
	return nil, false
}

// derivedMemories lists, sorted, the keys of memories derived from the call (only from it
// when only is set).
func (k *keyIndex) derivedMemories(call string, only bool) []string {
	var out []string
	for _, m := range sortedKeys(k.memorySources) {
		sources := k.memorySources[m]
		if only && len(sources) != 1 {
			continue
		}
		for _, s := range sources {
			if s == call {
				out = append(out, m)
				break
			}
		}
	}
	return out
}
