package api

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/model"
)

// TestClientBodiesAreWhatHandlersBind checks each of package client's request bodies
// against the request struct its handler binds: the same JSON fields, each of the same JSON
// kind, nested bodies included. The handlers refuse unknown fields, so a field the client
// names and the handler lacks would fail every request; one the client lacks could not be
// sent.
func TestClientBodiesAreWhatHandlersBind(t *testing.T) {
	for _, tc := range []struct {
		name           string
		client, server any
	}{
		{"Conversation", client.Conversation{}, createConversationRequest{}},
		{"Participant", client.Participant{}, addParticipantRequest{}},
		{"Instructions", client.Instructions{}, instructionsRequest{}},
		{"Fork", client.Fork{}, forkBranchRequest{}},
		{"Message", client.Message{}, appendMessageRequest{}},
		{"Run", client.Run{}, startRunRequest{}},
		{"RunEnd", client.RunEnd{}, finishRunRequest{}},
		{"ToolCall", client.ToolCall{}, toolCallRequest{}},
		{"ToolResult", client.ToolResult{}, toolResultRequest{}},
		{"Memory", client.Memory{}, memoryRequest{}},
		{"Skills", client.Skills{}, skillsRequest{}},
		{"Checkpoint", client.Checkpoint{}, checkpointRequest{}},
		{"Promotion", client.Promotion{}, promoteRequest{}},
		{"AssemblyRequest", client.AssemblyRequest{}, assemblyRequest{}},
		{"GenerationRequest", client.GenerationRequest{}, generationRequest{}},
		{"ContinueRequest", client.ContinueRequest{}, continueRequest{}},
		{"DiscussionRequest", client.DiscussionRequest{}, discussionRequest{}},
		{"SubagentsRequest", client.SubagentsRequest{}, subagentsRequest{}},
		{"ScheduleRequest", client.ScheduleRequest{}, scheduleRequest{}},
		{"PolicyRequest", client.PolicyRequest{}, createPolicyRequest{}},
		{"DefaultPolicy", client.DefaultPolicy{}, defaultPolicyRequest{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diffs := compareJSONShapes(reflect.TypeOf(tc.client), reflect.TypeOf(forkBranchRequest{}), ""); tc.name != "Fork" && len(diffs) == 0 {
				t.Fatalf("got no differences from the fork request, want the comparison to tell bodies apart")
			}
			for _, diff := range compareJSONShapes(reflect.TypeOf(tc.client), reflect.TypeOf(tc.server), "") {
				t.Error(diff)
			}
		})
	}
}

// compareJSONShapes lists how the JSON of struct types a and b differ: fields one has and
// the other lacks, and fields of different JSON kinds.
func compareJSONShapes(a, b reflect.Type, path string) []string {
	fa, fb := jsonFields(a), jsonFields(b)
	var diffs []string
	for name, ta := range fa {
		tb, ok := fb[name]
		if !ok {
			diffs = append(diffs, "the client sends "+path+name+", which the handler does not take")
			continue
		}
		ka, kb := jsonKind(ta), jsonKind(tb)
		if ka != kb {
			diffs = append(diffs, "got "+path+name+" as "+ka+" in the client, want "+kb+" as the handler binds it")
			continue
		}
		if ea, eb := elem(ta), elem(tb); ea.Kind() == reflect.Struct && eb.Kind() == reflect.Struct {
			diffs = append(diffs, compareJSONShapes(ea, eb, path+name+".")...)
		}
	}
	for name := range fb {
		if _, ok := fa[name]; !ok {
			diffs = append(diffs, "the handler takes "+path+name+", which the client cannot send")
		}
	}
	return diffs
}

// jsonFields maps the JSON names of struct t's fields, embedded structs flattened, to
// their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			for n, ft := range jsonFields(f.Type) {
				out[n] = ft
			}
			continue
		}
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// elem is t without pointers, and for a slice its element without pointers.
func elem(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Slice && t != reflect.TypeOf(client.Memory{}.Data) {
		return elem(t.Elem())
	}
	return t
}

// jsonKind names the JSON value type t encodes to: a json.RawMessage is "any".
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeOf(client.Memory{}.Data) {
		return "any"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "integer"
	case reflect.Float64, reflect.Float32:
		return "number"
	case reflect.Slice:
		if e := elem(t); e.Kind() == reflect.Struct {
			return "array of object"
		}
		return "array of " + jsonKind(t.Elem())
	case reflect.Map:
		return "map of " + jsonKind(t.Elem())
	case reflect.Struct:
		return "object"
	}
	return t.String()
}

// TestContinueTellsToolsLeftOutFromNone checks that a continue or a resume without tools
// reuses the run's, that an empty list names none, and that the client can send either.
func TestContinueTellsToolsLeftOutFromNone(t *testing.T) {
	for _, tc := range []struct {
		name, body  string
		client      client.ContinueRequest
		wantNamed   bool
		wantTools   int
		wantChoice  string
		wantInvalid string
	}{
		{"left out", `{}`, client.ContinueRequest{}, false, 0, "", ""},
		{"none", `{"tools":[]}`, client.ContinueRequest{Tools: []model.ToolSpec{}}, true, 0, "", ""},
		{"others", `{"tools":[{"name":"quote_get"}],"toolChoice":"quote_get"}`,
			client.ContinueRequest{Tools: []model.ToolSpec{{Name: "quote_get"}}, ToolChoice: "quote_get"}, true, 1, "quote_get", ""},
		// Judged by the generator against the run's tools.
		{"a choice alone", `{"toolChoice":"sheet_read"}`, client.ContinueRequest{ToolChoice: "sheet_read"}, false, 0, "sheet_read", ""},
		{"a choice of a tool not named", `{"tools":[],"toolChoice":"sheet_read"}`,
			client.ContinueRequest{Tools: []model.ToolSpec{}, ToolChoice: "sheet_read"}, true, 0, "", "toolChoice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sent, err := json.Marshal(tc.client)
			if err != nil {
				t.Fatal(err)
			}
			if !sameBody(t, string(sent), tc.body) {
				t.Errorf("the client sends %s, want %s", sent, tc.body)
			}
			var req continueRequest
			if err := json.Unmarshal([]byte(tc.body), &req); err != nil {
				t.Fatal(err)
			}
			o, err := req.options()
			if tc.wantInvalid != "" {
				var he *httpError
				if !errors.As(err, &he) || he.field != tc.wantInvalid {
					t.Fatalf("got error %v, want 400 naming %s", err, tc.wantInvalid)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.ToolsNamed != tc.wantNamed || len(o.Tools) != tc.wantTools || o.ToolChoice != tc.wantChoice {
				t.Errorf("got named %v, %d tools, choice %q; want %v, %d, %q", o.ToolsNamed, len(o.Tools), o.ToolChoice,
					tc.wantNamed, tc.wantTools, tc.wantChoice)
			}
		})
	}
}

func sameBody(t *testing.T, a, b string) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal([]byte(a), &va); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &vb); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return string(ja) == string(jb)
}
