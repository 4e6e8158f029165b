package integration

import (
	"context"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxgraph/ctxgraph/assembly"
	"github.com/ctxgraph/ctxgraph/policies"
	"github.com/ctxgraph/ctxgraph/policy"
)

// previousDefault is the id of the embedded default before echo was listed in it: what an
// assembly recorded by that ctxgraph names. It is retired, resolvable by this id only.
const previousDefault = "default@715a206db454"

// listedPolicies is GET /v1/policies by id, each with its source and default flag.
func (h *harness) listedPolicies(key string) map[string]map[string]any {
	h.t.Helper()
	r := h.callAs(key, "GET", "/v1/policies", nil)
	if r.status != 200 {
		h.t.Fatalf("GET /v1/policies: got %d, want 200; body %s", r.status, r.body)
	}
	out := map[string]map[string]any{}
	for _, p := range r.obj(h.t)["policies"].([]any) {
		v := p.(map[string]any)
		out[str(v, "id")] = v
	}
	return out
}

// A version created with POST /v1/policies is named by its content, stored once, listed
// for its account only, resolved by name or id, and becomes the account's default with
// PUT /v1/policies/default.
func TestPoliciesCreateListAndDefault(t *testing.T) {
	h := newHarness(t)
	body := map[string]any{"name": "short-window", "basedOn": "default", "windowMessages": 2,
		"providerClasses": map[string]any{"openai": []string{"public", "internal"}}}
	created := h.must(201, "POST", "/v1/policies", body)
	id := str(created, "id")
	if !regexp.MustCompile(`^short-window@[0-9a-f]{12}$`).MatchString(id) || created["windowMessages"].(float64) != 2 ||
		str(created, "source") != "account" || created["default"] != false {
		t.Fatalf("got %v, want short-window@hash with window 2, source account, not the default", created)
	}
	// The same content is the same version: 200, the same id, stored once.
	if again := h.must(200, "POST", "/v1/policies", body); str(again, "id") != id {
		t.Errorf("got id %s for the same content, want %s", str(again, "id"), id)
	}
	if n := cypherCount(t, `MATCH (p:PolicyVersion {accountId: $a, id: $id}) RETURN count(p)`, map[string]any{"a": h.account, "id": id}); n != 1 {
		t.Errorf("got %d stored versions of %s, want 1", n, id)
	}
	// Changed content is another version.
	body["windowMessages"] = 3
	if other := h.must(201, "POST", "/v1/policies", body); str(other, "id") == id {
		t.Errorf("got the same id %s for other content, want another", id)
	}

	listed := h.listedPolicies(h.key)
	def := policy.NewCatalog(nil).Default()
	if listed[id] == nil || str(listed[id], "source") != "account" || listed[def.ID] == nil || listed[def.ID]["default"] != true {
		t.Fatalf("got %v, want the embedded default marked default and %s listed as the account's", policyIDs(listed), id)
	}
	if other := h.listedPolicies(h.otherKey); other[id] != nil {
		t.Errorf("got %s listed for another account, want it the creator's only", id)
	}

	w := h.assemblyWorld()
	asm := map[string]any{"branchId": w.branch, "participantId": w.participant, "now": "2026-11-01T10:00:00Z"}
	for _, named := range []string{"short-window", id} {
		asm["policyVersion"] = named
		if a := h.assemble(asm); str(a, "policyVersion") != id && named == id {
			t.Errorf("policyVersion %s: got %s, want %s", named, str(a, "policyVersion"), id)
		}
	}
	asm["policyVersion"] = id
	h.expectError(h.callAs(h.otherKey, "POST", "/v1/assemblies", asm), 400, "invalid", "policyVersion")

	set := h.must(200, "PUT", "/v1/policies/default", map[string]any{"policyVersion": id})
	if str(set, "id") != id || set["default"] != true || str(set, "source") != "account" {
		t.Fatalf("got %v, want %s as the default", set, id)
	}
	if listed := h.listedPolicies(h.key); listed[id]["default"] != true || listed[def.ID]["default"] != false {
		t.Errorf("got default flags %v / %v, want only %s the default", listed[id]["default"], listed[def.ID]["default"], id)
	}
	delete(asm, "policyVersion")
	if a := h.assemble(asm); str(a, "policyVersion") != id {
		t.Errorf("got an assembly naming no version under %s, want the account's default %s", str(a, "policyVersion"), id)
	}
	if listed := h.listedPolicies(h.otherKey); listed[def.ID]["default"] != true {
		t.Errorf("got another account's default changed, want it the embedded default")
	}
	// The default can be an embedded version again, by name.
	if back := h.must(200, "PUT", "/v1/policies/default", map[string]any{"policyVersion": "strict-freshness"}); str(back, "name") != "strict-freshness" || str(back, "source") != "embedded" {
		t.Errorf("got %v, want strict-freshness, embedded", back)
	}
}

func policyIDs(m map[string]map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Every setting is validated, and the answer names the field.
func TestPoliciesRefuseWhatIsNotValid(t *testing.T) {
	h := newHarness(t)
	mine := str(h.must(201, "POST", "/v1/policies", map[string]any{"name": "mine", "windowMessages": 5}), "id")
	for _, tc := range []struct {
		name   string
		method string
		path   string
		body   map[string]any
		field  string
	}{
		{"no name", "POST", "/v1/policies", map[string]any{"windowMessages": 4}, "name"},
		{"a name with @", "POST", "/v1/policies", map[string]any{"name": "a@b"}, "name"},
		{"an unknown setting", "POST", "/v1/policies", map[string]any{"name": "x", "windowSize": 4}, "windowSize"},
		{"a setting of another type", "POST", "/v1/policies", map[string]any{"name": "x", "windowMessages": "four"}, "windowMessages"},
		{"a window of none", "POST", "/v1/policies", map[string]any{"name": "x", "windowMessages": 0}, "windowMessages"},
		{"secret to a provider", "POST", "/v1/policies", map[string]any{"name": "x", "providerClasses": map[string]any{"echo": []string{"secret"}}}, "providerClasses"},
		{"an unknown privacy class", "POST", "/v1/policies", map[string]any{"name": "x", "providerClasses": map[string]any{"echo": []string{"confidential"}}}, "providerClasses"},
		{"stale handling", "POST", "/v1/policies", map[string]any{"name": "x", "staleHandling": "hide"}, "staleHandling"},
		{"a ttl", "POST", "/v1/policies", map[string]any{"name": "x", "ttl": map[string]any{"volatile": "soon"}}, "ttl"},
		{"a promotion", "POST", "/v1/policies", map[string]any{"name": "x", "promotion": map[string]any{"extractor": "magic/9"}}, "promotion"},
		{"an unknown basedOn", "POST", "/v1/policies", map[string]any{"name": "x", "basedOn": "lenient"}, "basedOn"},
		{"another account's basedOn", "POST", "/v1/policies", map[string]any{"name": "x", "basedOn": mine}, "basedOn"},
		{"an unknown default", "PUT", "/v1/policies/default", map[string]any{"policyVersion": "lenient"}, "policyVersion"},
		{"another account's default", "PUT", "/v1/policies/default", map[string]any{"policyVersion": mine}, "policyVersion"},
		{"no default", "PUT", "/v1/policies/default", map[string]any{}, "policyVersion"},
	} {
		key := h.key
		if strings.HasPrefix(tc.name, "another account") {
			key = h.otherKey
		}
		r := h.callAs(key, tc.method, tc.path, tc.body)
		if r.status != 400 {
			t.Errorf("%s: got status %d, want 400; body %s", tc.name, r.status, r.body)
			continue
		}
		if code, field := r.errorOf(t); code != "invalid" || field != tc.field {
			t.Errorf("%s: got %s naming %q, want invalid naming %q; body %s", tc.name, code, field, tc.field, r.body)
		}
	}
}

// An assembly recorded under the previous embedded default (before echo was listed in it)
// replays identical once the default has changed, and once the binary no longer holds the
// version at all: the version was stored with the assembly.
func TestPoliciesReplayAcrossAChangedDefault(t *testing.T) {
	h := newHarness(t)
	w := h.assemblyWorld()
	body := map[string]any{"branchId": w.branch, "participantId": w.participant, "provider": "echo",
		"now": "2026-11-01T10:00:00Z", "trace": true}
	body["policyVersion"] = previousDefault
	old := h.assemble(body)
	delete(body, "policyVersion")
	current := h.assemble(body)
	if str(old, "policyVersion") != previousDefault || str(current, "policyVersion") == previousDefault {
		t.Fatalf("got versions %s and %s, want %s and the new default", str(old, "policyVersion"), str(current, "policyVersion"), previousDefault)
	}
	// The default changed what echo may receive: the old one restricted the internal memory.
	if got := includedAs(old)[w.memNew]; got == "memory" {
		t.Errorf("got the internal memory included for echo under %s, want it restricted", previousDefault)
	}
	if got := includedAs(current)[w.memNew]; got != "memory" {
		t.Errorf("got the internal memory as %q for echo under the new default, want memory", got)
	}
	if n := cypherCount(t, `MATCH (p:PolicyVersion {accountId: $a, id: $id}) RETURN count(p)`, map[string]any{"a": h.account, "id": previousDefault}); n != 1 {
		t.Fatalf("got %d stored versions %s, want the one its assembly recorded under", n, previousDefault)
	}

	replay := func(a *assembly.Service, id string) map[string]any {
		rep, err := a.Replay(context.Background(), h.account, id)
		if err != nil {
			t.Fatal(err)
		}
		return map[string]any{"identical": rep.Identical, "differences": rep.Differences}
	}
	for _, a := range []map[string]any{old, current} {
		if rep := h.must(200, "POST", "/v1/assemblies/"+str(a, "id")+"/replay", nil); rep["identical"] != true {
			t.Errorf("replay of %s under %s: got %v, want identical", str(a, "id"), str(a, "policyVersion"), rep)
		}
		// An upgraded ctxgraph whose binary holds none of these versions still replays.
		upgraded := assembly.NewService(sharedStore)
		upgraded.Policies = policies.New(sharedStore, policy.Catalog{})
		if rep := replay(upgraded, str(a, "id")); rep["identical"] != true {
			t.Errorf("replay of %s without the version in the binary: got %v, want identical", str(a, "id"), rep)
		}
	}
	// Another account cannot replay through a version it never stored.
	if _, err := policies.New(sharedStore, policy.Catalog{}).Recorded(context.Background(), "no-such-account", previousDefault); err == nil {
		t.Errorf("got %s resolved for an account that never stored it from an empty catalog, want an error", previousDefault)
	}
}

// An assembly under an account's own version replays identical without the service that
// created it: the version is read from the graph.
func TestPoliciesAccountVersionReplaysFromTheStore(t *testing.T) {
	h := newHarness(t)
	id := str(h.must(201, "POST", "/v1/policies", map[string]any{"name": "one-message", "windowMessages": 1}), "id")
	w := h.assemblyWorld()
	a := h.assemble(map[string]any{"branchId": w.branch, "participantId": w.participant, "policyVersion": id, "now": "2026-11-01T10:00:00Z"})
	upgraded := assembly.NewService(sharedStore)
	upgraded.Policies = policies.New(sharedStore, policy.Catalog{})
	rep, err := upgraded.Replay(context.Background(), h.account, str(a, "id"))
	if err != nil || !rep.Identical || rep.PolicyVersion != id {
		t.Errorf("got (%+v, %v), want an identical replay under %s", rep, err, id)
	}
}

// The providers file's receives and zeroRetention enter the effective versions; a provider
// nothing names receives public only; GET /v1/providers says what each receives.
func TestProviderTrustFromTheProvidersFile(t *testing.T) {
	h := newProviderHarness(t, providersFor(t, `providers:
  - {name: vllm, kind: openai, baseURL: "http://127.0.0.1:9/v1", apiKeyEnv: CTXGRAPH_TEST_KEY, receives: [internal, public], zeroRetention: true, models: [qwen]}
  - {name: unnamed, kind: openai, baseURL: "http://127.0.0.1:9/v1"}
  - {name: echo, kind: echo}
`)...)
	got := h.must(200, "GET", "/v1/providers", nil)
	def := policy.NewCatalog(nil).Default()
	if str(got, "policyVersion") == def.ID || !strings.HasPrefix(str(got, "policyVersion"), "default@") {
		t.Errorf("got providers judged under %s, want a new default id with the providers' trust folded in", str(got, "policyVersion"))
	}
	want := map[string]struct {
		host     string
		receives []any
		zero     bool
	}{
		"vllm":    {"127.0.0.1:9", []any{"public", "internal"}, true},
		"unnamed": {"127.0.0.1:9", []any{"public"}, false},
		"echo":    {"", []any{"public", "internal", "user_private", "oauth_derived", "google_derived"}, true},
	}
	list := got["providers"].([]any)
	if len(list) != len(want) {
		t.Fatalf("got %d providers, want %d", len(list), len(want))
	}
	for _, p := range list {
		v := p.(map[string]any)
		w := want[str(v, "name")]
		if str(v, "baseURLHost") != w.host || !reflect.DeepEqual(v["receives"], w.receives) || v["zeroRetention"] != w.zero {
			t.Errorf("got %v, want host %q receiving %v, zero retention %v", v, w.host, w.receives, w.zero)
		}
	}
	if strings.Contains(string(h.call("GET", "/v1/providers", nil).body), "value-of-") {
		t.Errorf("got the key in GET /v1/providers")
	}
	// The effective default is listed, judged by the assembler: the internal memory reaches
	// vllm, not the provider nothing names.
	listed := h.listedPolicies(h.key)
	eff := listed[str(got, "policyVersion")]
	if eff == nil || eff["default"] != true || str(eff, "source") != "embedded" {
		t.Fatalf("got %v, want the effective default listed as the default", eff)
	}
	w := h.assemblyWorld()
	for provider, wantAs := range map[string]string{"vllm": "memory", "unnamed": "", "echo": "memory"} {
		a := h.assemble(map[string]any{"branchId": w.branch, "participantId": w.participant, "provider": provider, "now": "2026-11-01T10:00:00Z"})
		if got := includedAs(a)[w.memNew]; got != wantAs {
			t.Errorf("%s: got the internal memory as %q, want %q", provider, got, wantAs)
		}
		if str(a, "policyVersion") != str(got, "policyVersion") {
			t.Errorf("%s: got the assembly under %s, want the effective default %s", provider, str(a, "policyVersion"), str(got, "policyVersion"))
		}
	}
}
