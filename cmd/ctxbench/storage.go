package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/cypher"
)

// What generations leave in the store: a conversation of its own takes n generations
// through llm-katan on one branch; its footprint is counted on the graph
// (cypher.ConversationFootprint) with every assembly record whole, as each is written, then
// after the records' sweep at the default keeping (DESIGN §10: the latest 20 of the branch
// whole, 5 % sampled beyond).

type storageResult struct {
	Generations int
	// Whole and Swept are the footprint by label before and after the sweep; Trimmed the
	// records the sweep trimmed (of every conversation the sweep found, not only this one).
	Whole, Swept []cypher.FootprintRow
	Trimmed      int
	Err          string
}

func footprintBytes(rows []cypher.FootprintRow) (total int64) {
	for _, r := range rows {
		total += r.Bytes
	}
	return total
}

func (b *bench) measureStorage(ctx context.Context, n int) *storageResult {
	out := &storageResult{Generations: n}
	providerName, modelName, ok := strings.Cut(b.dropInModelName, "/")
	if !ok {
		out.Err = "no generation of the phase named a provider and model"
		return out
	}
	api := b.api.WithKey(b.key)
	conv, err := api.CreateConversation(ctx, client.Conversation{Title: "storage: what generations leave in the store"})
	if err != nil {
		out.Err = err.Error()
		return out
	}
	b.convs = append(b.convs, b.key+"|"+conv.ID)
	p, err := api.AddParticipant(ctx, conv.ID, client.Participant{Kind: "model", Name: "storage", Provider: providerName, Model: modelName})
	if err != nil {
		out.Err = err.Error()
		return out
	}
	for i := range n {
		st, body, _, err := b.call(ctx, b.key, http.MethodPost, "/v1/generations", b.generationBody(conv.BranchID, p.ID, i, false))
		if err != nil || st != http.StatusCreated {
			out.Err = fmt.Sprintf("generation %d: %d %v %s", i, st, err, clip(body))
			return out
		}
	}
	if out.Whole, err = b.store.ConversationFootprint(ctx, b.account, conv.ID); err != nil {
		out.Err = err.Error()
		return out
	}
	// The sweep looks at assemblies recorded at least a grace ago; here none, so that it
	// takes these at once.
	sw := cypher.Sweep{Holder: "ctxbench-" + randomHex(4), Lease: time.Minute, Branches: 200, Records: 50}
	for deadline := time.Now().Add(70 * time.Second); ; time.Sleep(time.Second) {
		trimmed, held, err := b.store.SweepAssemblyRecords(ctx, sw)
		if err != nil {
			out.Err = "sweeping: " + err.Error()
			return out
		}
		if held {
			out.Trimmed = trimmed
			break
		}
		if time.Now().After(deadline) {
			out.Err = "the records' sweep lease stayed held by another server"
			return out
		}
	}
	if out.Swept, err = b.store.ConversationFootprint(ctx, b.account, conv.ID); err != nil {
		out.Err = err.Error()
		return out
	}
	whole, swept := footprintBytes(out.Whole), footprintBytes(out.Swept)
	logf("storage: %d generations leave %d bytes each with every record whole, %d after the sweep (%.1f× fewer)",
		n, whole/int64(n), swept/int64(n), float64(whole)/float64(max(swept, 1)))
	return out
}

// reportStorage writes what the generations left in the store.
func (b *bench) reportStorage(pf func(string, ...any), s *storageResult) {
	pf("### What a generation leaves in the store\n\n")
	if s.Err != "" {
		pf("Not measured: %s\n\n", oneLine(clipS(s.Err, 300)))
		return
	}
	pf("A conversation of its own, %d generations through llm-katan on one branch (a user message and the answer each, the default policy), counted on the graph by `cypher.ConversationFootprint`: every node of the conversation with its outgoing relationships and properties, in Neo4j 5's record format (node 15 B, relationship 34 B, property records of four 8-byte blocks at 41 B, strings over 15 characters and lists in 128-byte dynamic records; label, index and relationship-group records left out). *Whole* is right after the generations, every assembly record whole as it is written; *swept* after the assembly records' sweep at the default keeping (DESIGN §10: the latest 20 of the branch whole, a 5 %% sample beyond by assembly id, traced and failed-run ones whole; the sweep trimmed %d records in all).\n\n",
		s.Generations, s.Trimmed)
	pf("| label | nodes | relationships out, whole | swept | bytes, whole | swept |\n|---|---:|---:|---:|---:|---:|\n")
	swept := map[string]cypher.FootprintRow{}
	for _, r := range s.Swept {
		swept[r.Label] = r
	}
	for _, r := range s.Whole {
		sw := swept[r.Label]
		pf("| %s | %s | %s | %s | %s | %s |\n", r.Label, thousands(int(r.Nodes)), thousands(int(r.Relationships)), thousands(int(sw.Relationships)),
			thousands(int(r.Bytes)), thousands(int(sw.Bytes)))
	}
	whole, after := footprintBytes(s.Whole), footprintBytes(s.Swept)
	pf("| **per generation** | | | | **%s** | **%s** (%.1f× fewer) |\n\n", thousands(int(whole/int64(s.Generations))),
		thousands(int(after/int64(s.Generations))), float64(whole)/float64(max(after, 1)))
}
