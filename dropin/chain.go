// Package dropin serves the drop-in endpoints' calls (DESIGN §9): it finds a client's
// conversation and participant, reconciles the list the client sends every call against
// the branch through a hash chain (recording only the new tail, forking where an earlier
// message changed), and runs the generation path. The vendors' wire formats are the
// concern of the packages that translate them; this one speaks model.ClientMessage.
package dropin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/ctxgraph/ctxgraph/model"
)

// chainSeed is the hash of the empty list; the chain's version is part of it, so that a
// change of the canonical form starts every branch's chain afresh rather than mismatching.
var chainSeed = hashOf([]byte("ctxgraph-chain/1"))

// Chain returns the chain hashes of msgs: out[k] is the hash of the first k messages, each
// the sha256 of the hash before it and the message's canonical form. Matching a list
// against a branch then compares one hash, however long the history.
func Chain(msgs []model.ClientMessage) []string {
	return ChainFrom(chainSeed, msgs)
}

// ChainFrom is Chain continued from the hash of a list already recorded (a previous
// response's point): out[0] is that hash.
func ChainFrom(start string, msgs []model.ClientMessage) []string {
	out := make([]string, len(msgs)+1)
	out[0] = start
	for i, m := range msgs {
		out[i+1] = Next(out[i], m)
	}
	return out
}

// Next is the chain hash after m, following prev.
func Next(prev string, m model.ClientMessage) string {
	var b bytes.Buffer
	b.WriteString(prev)
	b.WriteByte('\n')
	b.Write(canonical(m))
	return hashOf(b.Bytes())
}

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// canonical is what identifies a message in the chain: its role, its text, its tool calls
// with their arguments re-encoded canonically (a client that parses them and encodes them
// again, as LangChain does, sends the same call) and its results' call ids and contents; or,
// for an item with an id, the id.
func canonical(m model.ClientMessage) []byte {
	if m.ItemID != "" {
		// An item with an id is that item, whether sent whole or by reference.
		out, _ := json.Marshal(struct{ Item string }{m.ItemID})
		return out
	}
	type call struct {
		ID, Name  string
		Arguments string
	}
	type result struct {
		CallID, Content string
		IsError         bool
	}
	c := struct {
		Role, Text string
		Calls      []call
		Results    []result
	}{Role: m.Role, Text: m.Text}
	for _, tc := range m.ToolCalls {
		c.Calls = append(c.Calls, call{ID: tc.ID, Name: tc.Name, Arguments: CanonicalJSON(tc.Arguments)})
	}
	for _, r := range m.Results {
		c.Results = append(c.Results, result{CallID: r.CallID, Content: r.Content, IsError: r.IsError})
	}
	out, _ := json.Marshal(c)
	return out
}

// CanonicalJSON is raw re-encoded compactly with its object keys sorted and its numbers as
// written; raw that is not JSON is returned as it is, and empty raw as `{}`.
func CanonicalJSON(raw []byte) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}"
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return string(raw)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(out)
}

// Schema is a tool's parameter schema as a vendor request sent it: nil when it sent none or
// null, so that the tool is offered without one.
func Schema(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// DecodeRequest reads a vendor's request body, what it is (such as "a Messages request")
// naming it in the error; KindInvalid names the field a value of the wrong type is in.
func DecodeRequest[T any](body []byte, what string) (T, error) {
	var r T
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&r); err != nil {
		field := "body"
		if te, ok := err.(*json.UnmarshalTypeError); ok && te.Field != "" {
			field = te.Field
		}
		return r, model.Invalid(field, "the request body is not %s: %s", what, err.Error())
	}
	return r, nil
}
