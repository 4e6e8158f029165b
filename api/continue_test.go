package api

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/ctxgraph/ctxgraph/client"
	"github.com/ctxgraph/ctxgraph/model"
)

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
