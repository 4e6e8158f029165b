package policy

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/ctxgraph/ctxgraph/model"
)

func TestTheDefaultListsEcho(t *testing.T) {
	v := mustResolve(t, "")
	if got := v.ProviderClasses["echo"]; !slices.Equal(got, EchoClasses) {
		t.Errorf("got echo receiving %v, want %v", got, EchoClasses)
	}
	if v.MayReceive("echo", "secret") {
		t.Errorf("got echo allowed secret, want every class but secret")
	}
	if !slices.Contains(v.ZeroRetention, "echo") {
		t.Errorf("got zero-retention providers %v, want echo among them", v.ZeroRetention)
	}
	// The version it replaced still resolves by its id, with echo restricted.
	old, err := Resolve(retired[2].ID)
	if err != nil {
		t.Fatal(err)
	}
	if old.Name != "default" || old.ID == v.ID || old.MayReceive("echo", "public") {
		t.Errorf("got retired %s receiving %v for echo, want the previous default without echo", old.ID, old.ProviderClasses["echo"])
	}
}

func TestTrusted(t *testing.T) {
	base := mustResolve(t, "")
	cases := []struct {
		name      string
		trust     []ProviderTrust
		provider  string
		want      []string
		wantZero  bool
		wantSameV bool
	}{
		{"no providers leave the version", nil, "openai", base.ProviderClasses["openai"], true, true},
		{"echo named without receives keeps what the version lists", []ProviderTrust{{Name: "echo"}}, "echo", EchoClasses, true, true},
		{"a provider nothing names receives public only", []ProviderTrust{{Name: "vllm"}}, "vllm", []string{"public"}, false, false},
		{"a listed provider without receives keeps its classes", []ProviderTrust{{Name: "openrouter"}}, "openrouter", base.ProviderClasses["openrouter"], false, true},
		{"receives replaces, in rank order", []ProviderTrust{{Name: "openrouter", Receives: []string{"user_private", "public"}}}, "openrouter", []string{"public", "user_private"}, false, false},
		{"receives nothing", []ProviderTrust{{Name: "openai", Receives: []string{}}}, "openai", []string{}, true, false},
		{"zero retention joins the list", []ProviderTrust{{Name: "vllm", Receives: []string{"public", "oauth_derived"}, ZeroRetention: true}}, "vllm", []string{"public", "oauth_derived"}, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := Trusted(base, tc.trust)
			if got := v.ProviderClasses[tc.provider]; !slices.Equal(got, tc.want) {
				t.Errorf("got %s receiving %v, want %v", tc.provider, got, tc.want)
			}
			if got := slices.Contains(v.ZeroRetention, tc.provider); got != tc.wantZero {
				t.Errorf("got %s zero-retention %v, want %v", tc.provider, got, tc.wantZero)
			}
			if got := v.ID == base.ID; got != tc.wantSameV {
				t.Errorf("got id %s against %s (same %v), want same %v", v.ID, base.ID, got, tc.wantSameV)
			}
			if v.ID != contentID(v) {
				t.Errorf("got id %s, want its content id %s", v.ID, contentID(v))
			}
		})
	}
	if again := mustResolve(t, ""); !reflect.DeepEqual(again, base) {
		t.Errorf("got the embedded default changed by folding trust into it, want it immutable")
	}
}

func TestCatalogLookup(t *testing.T) {
	c := NewCatalog([]ProviderTrust{{Name: "vllm", Receives: []string{"public", "internal"}}})
	def := c.Default()
	if def.Name != "default" || def.ID == mustResolve(t, "").ID || !def.MayReceive("vllm", "internal") {
		t.Fatalf("got effective default %s with vllm %v, want a new default id with vllm's classes", def.ID, def.ProviderClasses["vllm"])
	}
	cases := []struct {
		nameOrID string
		wantID   string
	}{
		{"", def.ID},
		{"default", def.ID},
		{def.ID, def.ID},
		{"strict-freshness", c.Versions()[1].ID},
		{mustResolve(t, "").ID, mustResolve(t, "").ID}, // the embedded version as written
		{retired[0].ID, retired[0].ID},
	}
	for _, tc := range cases {
		t.Run(tc.nameOrID, func(t *testing.T) {
			v, ok := c.Lookup(tc.nameOrID)
			if !ok || v.ID != tc.wantID {
				t.Errorf("got (%s, %v), want %s", v.ID, ok, tc.wantID)
			}
		})
	}
	if _, ok := c.Lookup(retired[0].Name + "x"); ok {
		t.Errorf("got an unknown name resolved, want it unknown")
	}
}

func TestDerive(t *testing.T) {
	base := mustResolve(t, "")
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	v, err := Derive(base, "team", map[string]json.RawMessage{"windowMessages": raw("4"),
		"providerClasses": raw(`{"echo": ["internal", "public"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if v.WindowMessages != 4 || !slices.Equal(v.ProviderClasses["echo"], []string{"public", "internal"}) || len(v.ProviderClasses) != 1 {
		t.Errorf("got window %d and classes %v, want 4 and echo's public, internal only", v.WindowMessages, v.ProviderClasses)
	}
	if v.Name != "team" || v.ID != contentID(v) || v.StaleHandling != base.StaleHandling {
		t.Errorf("got %s (%s), want team named by its content with the base's other settings", v.ID, v.StaleHandling)
	}
	again, _ := Derive(base, "team", map[string]json.RawMessage{"providerClasses": raw(`{"echo": ["public", "internal"]}`), "windowMessages": raw("4")})
	if again.ID != v.ID {
		t.Errorf("got %s for the same settings in another order, want %s", again.ID, v.ID)
	}
	if !reflect.DeepEqual(mustResolve(t, ""), base) || len(base.ProviderClasses) < 2 {
		t.Errorf("got the base changed by Derive, want it immutable")
	}
	off, err := Derive(base, "no-recall", map[string]json.RawMessage{"recall": raw("null")})
	if err != nil || off.Recall != nil {
		t.Errorf("got (%v, %v), want recall turned off", off.Recall, err)
	}
}

func TestDeriveRefuses(t *testing.T) {
	base := mustResolve(t, "")
	cases := []struct {
		name      string
		vname     string
		setting   string
		value     string
		wantField string
	}{
		{"a name with @", "a@b", "windowMessages", "4", "name"},
		{"an empty name", "", "windowMessages", "4", "name"},
		{"an unknown setting", "x", "windowSize", "4", "windowSize"},
		{"the id is no setting", "x", "id", `"x@1"`, "id"},
		{"a value of another type", "x", "windowMessages", `"four"`, "windowMessages"},
		{"a window of none", "x", "windowMessages", "0", "windowMessages"},
		{"secret to a provider", "x", "providerClasses", `{"echo": ["secret"]}`, "providerClasses"},
		{"an unknown class", "x", "providerClasses", `{"echo": ["confidential"]}`, "providerClasses"},
		{"a provider name with spaces", "x", "providerClasses", `{"my llm": ["public"]}`, "providerClasses"},
		{"neverSent without secret", "x", "neverSent", `[]`, "neverSent"},
		{"stale handling", "x", "staleHandling", `"hide"`, "staleHandling"},
		{"a ttl of a class that never goes stale", "x", "ttl", `{"durable": "1h"}`, "ttl"},
		{"a ttl that is no duration", "x", "ttl", `{"volatile": "an hour"}`, "ttl"},
		{"conflict handling", "x", "conflictHandling", `"latest"`, "conflictHandling"},
		{"a budget of none", "x", "defaultTokenBudget", "0", "defaultTokenBudget"},
		{"budget priorities", "x", "budgetPriorities", `["memories"]`, "budgetPriorities"},
		{"an unknown extractor", "x", "promotion", `{"extractor": "magic/1", "verbatimTokens": 1, "digestTokens": 1, "freshnessClass": "bounded"}`, "promotion"},
		{"an unknown promotion field", "x", "promotion", `{"extractors": "structural/1"}`, "promotion"},
		{"recall rounds", "x", "recall", `{"maxRounds": 0}`, "recall"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Derive(base, tc.vname, map[string]json.RawMessage{tc.setting: json.RawMessage(tc.value)})
			var e *model.Error
			if !errors.As(err, &e) || e.Kind != model.KindInvalid || e.Field != tc.wantField {
				t.Fatalf("got (%s, %v), want an invalid error naming %s", v.ID, err, tc.wantField)
			}
		})
	}
}

func TestReceivable(t *testing.T) {
	cases := []struct {
		classes []string
		wantErr bool
	}{
		{[]string{"public", "internal", "user_private", "oauth_derived", "google_derived"}, false},
		{[]string{}, false},
		{[]string{"secret"}, true},
		{[]string{"Public"}, true},
		{[]string{"public", "public"}, true},
	}
	for _, tc := range cases {
		if err := Receivable(tc.classes); (err != nil) != tc.wantErr {
			t.Errorf("%v: got error %v, want error %v", tc.classes, err, tc.wantErr)
		}
	}
}
