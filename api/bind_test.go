package api

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/ctxgraph/ctxgraph/model"
)

func bindBody(t *testing.T, body string, dst any) error {
	t.Helper()
	s := New(Config{})
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	return s.bind(s.echo.NewContext(req, httptest.NewRecorder()), dst)
}

func TestBindNamesFieldAndRule(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		dst        any
		field, msg string
	}{
		{"integer as decimal", `{"branchId":"b","participantId":"p","tokenBudget":31401.0}`, &assemblyRequest{},
			"tokenBudget", "tokenBudget must be an integer"},
		{"integer in exponent form", `{"branchId":"b","participantId":"p","tokenBudget":1e4}`, &assemblyRequest{},
			"tokenBudget", "tokenBudget must be an integer"},
		{"integer as string", `{"branchId":"b","participantId":"p","tokenBudget":"many"}`, &assemblyRequest{},
			"tokenBudget", "tokenBudget must be an integer, not a string"},
		{"upper bound", `{"branchId":"b","participantId":"p","tokenBudget":2000001}`, &assemblyRequest{},
			"tokenBudget", "tokenBudget must be at most 2000000"},
		{"lower bound", `{"branchId":"b","participantId":"p","tokenBudget":-1}`, &assemblyRequest{},
			"tokenBudget", "tokenBudget must be at least 1"},
		{"zero budget", `{"branchId":"b","participantId":"p","tokenBudget":0}`, &assemblyRequest{},
			"tokenBudget", "tokenBudget must be at least 1"},
		{"unknown field", `{"titel":"x"}`, &createConversationRequest{},
			"titel", "titel is not a field of this request"},
		{"unknown nested field", `{"status":"succeeded","memories":[{"summary":"s"},{"summary":"s","sumary":"t"}]}`, &toolResultRequest{},
			"memories[1].sumary", "memories[1].sumary is not a field of this request"},
		{"fraction bound", `{"status":"succeeded","memories":[{"summary":"s","confidence":1.5}]}`, &toolResultRequest{},
			"memories[0].confidence", "memories[0].confidence must be at most 1"},
		{"string as number", `{"role":"user","content":7}`, &appendMessageRequest{},
			"content", "content must be a string, not a number"},
		{"invalid UTF-8 in a field", "{\"role\":\"user\",\"content\":\"caf\xe9\"}", &appendMessageRequest{},
			"content", "content must be valid UTF-8"},
		{"invalid UTF-8 in a nested field", "{\"status\":\"succeeded\",\"memories\":[{\"summary\":\"ok\"},{\"summary\":\"x\xff\"}]}", &toolResultRequest{},
			"memories[1].summary", "memories[1].summary must be valid UTF-8"},
		{"invalid UTF-8 in raw JSON", "{\"tool\":\"search\",\"arguments\":{\"q\":[\"a\",\"\xc3\"]}}", &toolCallRequest{},
			"arguments.q[1]", "arguments.q[1] must be valid UTF-8"},
		{"content too large", `{"role":"user","content":"` + strings.Repeat("é", MaxFieldBytes/2) + `x"}`, &appendMessageRequest{},
			"content", "content must be at most 1048576 bytes"},
		{"arguments too large", `{"tool":"search","arguments":"` + strings.Repeat("a", MaxFieldBytes) + `"}`, &toolCallRequest{},
			"arguments", "arguments must be at most 1048576 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := bindBody(t, tc.body, tc.dst)
			var he *httpError
			if !errors.As(err, &he) {
				t.Fatalf("got %v, want a 400 naming %s", err, tc.field)
			}
			if he.status != http.StatusBadRequest || he.field != tc.field || he.message != tc.msg {
				t.Errorf("got %d field %q %q, want 400 field %q %q", he.status, he.field, he.message, tc.field, tc.msg)
			}
		})
	}
}

func TestBindAcceptsTheLimits(t *testing.T) {
	content := strings.Repeat("é", MaxFieldBytes/2)
	var m appendMessageRequest
	if err := bindBody(t, `{"role":"user","content":"`+content+`"}`, &m); err != nil {
		t.Fatalf("content of exactly %d bytes: %v", MaxFieldBytes, err)
	}
	if m.Content != content {
		t.Errorf("content changed in binding")
	}
	var a assemblyRequest
	if err := bindBody(t, `{"branchId":"b","participantId":"p","tokenBudget":2000000}`, &a); err != nil || derefInt(a.TokenBudget) != 2000000 {
		t.Errorf("tokenBudget 2000000: %v, %v", err, a.TokenBudget)
	}
	var absent assemblyRequest
	if err := bindBody(t, `{"branchId":"b","participantId":"p"}`, &absent); err != nil || absent.TokenBudget != nil {
		t.Errorf("no tokenBudget: %v, %v; want it absent so the default applies", err, absent.TokenBudget)
	}
}

// TestEnumsAreModelsLists checks each enum field against model's list: every value of the
// list binds, anything else is refused with the list in the message.
func TestEnumsAreModelsLists(t *testing.T) {
	for _, tc := range []struct {
		tag, field string
		list       []string
		body       func(value string) string
		dst        func() any
	}{
		{"participantkind", "kind", model.ParticipantKinds,
			func(v string) string { return `{"kind":"` + v + `","name":"n"}` }, func() any { return &addParticipantRequest{} }},
		{"messagerole", "role", model.MessageRoles,
			func(v string) string { return `{"role":"` + v + `","content":"c"}` }, func() any { return &appendMessageRequest{} }},
		{"runtimekind", "runtimeKind", model.RuntimeKinds,
			func(v string) string { return `{"participantId":"p","runtimeKind":"` + v + `"}` }, func() any { return &startRunRequest{} }},
		{"turnruntimekind", "runtimeKind", model.TurnRuntimeKinds,
			func(v string) string { return `{"branchId":"b","participantIds":["p"],"runtimeKind":"` + v + `"}` },
			func() any { return &generationRequest{} }},
		{"runendstatus", "status", model.RunEndStatuses,
			func(v string) string { return `{"status":"` + v + `"}` }, func() any { return &finishRunRequest{} }},
		{"toolresultstatus", "status", model.ToolResultStatuses,
			func(v string) string { return `{"status":"` + v + `","error":{"code":"c"}}` }, func() any { return &toolResultRequest{} }},
		{"visibility", "visibility", model.Visibilities,
			func(v string) string { return `{"summary":"s","visibility":"` + v + `"}` }, func() any { return &memoryRequest{} }},
		{"freshnessclass", "freshnessClass", model.FreshnessClasses,
			func(v string) string { return `{"summary":"s","freshnessClass":"` + v + `"}` }, func() any { return &memoryRequest{} }},
	} {
		t.Run(tc.tag, func(t *testing.T) {
			if got := enums[tc.tag]; !slices.Equal(got, tc.list) {
				t.Fatalf("got enum %s = %v, want model's list %v", tc.tag, got, tc.list)
			}
			for _, v := range tc.list {
				if err := bindBody(t, tc.body(v), tc.dst()); err != nil {
					t.Errorf("%s %q: got %v, want it accepted", tc.field, v, err)
				}
			}
			err := bindBody(t, tc.body("bogus"), tc.dst())
			var he *httpError
			want := tc.field + " must be one of: " + strings.Join(tc.list, ", ")
			if !errors.As(err, &he) || he.field != tc.field || he.message != want {
				t.Errorf("%s \"bogus\": got %v, want field %s and message %q", tc.field, err, tc.field, want)
			}
		})
	}
}
