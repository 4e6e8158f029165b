package api

import (
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"go.yaml.in/yaml/v3"
)

// openAPIDocument is the part of an OpenAPI document these tests read.
type openAPIDocument struct {
	OpenAPI string `yaml:"openapi"`
	// Paths holds each path item's fields undecoded: operations are maps, but a path's
	// parameters are a list.
	Paths map[string]map[string]yaml.Node `yaml:"paths"`
}

type openAPIOperation struct {
	OperationID string         `yaml:"operationId"`
	Responses   map[string]any `yaml:"responses"`
}

// openAPIMethods are the keys of a path item that name operations; the others (parameters,
// summary, description, servers) describe the path.
var openAPIMethods = map[string]bool{
	"get": true, "put": true, "post": true, "delete": true, "options": true, "head": true, "patch": true, "trace": true,
}

func parseOpenAPISpec(t *testing.T) openAPIDocument {
	t.Helper()
	var doc openAPIDocument
	if err := yaml.Unmarshal(OpenAPISpec(), &doc); err != nil {
		t.Fatalf("parsing openapi.yaml: %v", err)
	}
	return doc
}

// specOperations lists the document's operations as "METHOD /path", sorted, with the
// operation of each.
func specOperations(t *testing.T, doc openAPIDocument) ([]string, map[string]openAPIOperation) {
	t.Helper()
	ops := map[string]openAPIOperation{}
	var names []string
	for path, item := range doc.Paths {
		for method, node := range item {
			if !openAPIMethods[method] {
				continue
			}
			name := strings.ToUpper(method) + " " + path
			var op openAPIOperation
			if err := node.Decode(&op); err != nil {
				t.Fatalf("%s: decoding the operation: %v", name, err)
			}
			ops[name] = op
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, ops
}

// serverRoutes lists the routes New registers, sorted, without the catch-all routes Echo adds
// so that a group's middleware runs for unknown paths.
func serverRoutes() []string {
	var routes []string
	for _, r := range New(Config{}).Routes() {
		if strings.HasPrefix(r, echo.RouteNotFound+" ") {
			continue
		}
		routes = append(routes, r)
	}
	slices.Sort(routes)
	return routes
}

func TestOpenAPIMatchesRoutes(t *testing.T) {
	routes := serverRoutes()
	if len(routes) == 0 {
		t.Fatal("New registered no routes")
	}
	specified, _ := specOperations(t, parseOpenAPISpec(t))

	tests := []struct {
		name      string
		want, got []string
	}{
		{name: "routes registered in New but missing from openapi.yaml", want: routes, got: specified},
		{name: "operations in openapi.yaml but not registered in New", want: specified, got: routes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var missing []string
			for _, w := range tt.want {
				if !slices.Contains(tt.got, w) {
					missing = append(missing, w)
				}
			}
			if len(missing) > 0 {
				t.Errorf("%s: got %q, want none", tt.name, missing)
			}
		})
	}
}

func TestOpenAPIOperations(t *testing.T) {
	doc := parseOpenAPISpec(t)
	if got, want := doc.OpenAPI, "3.1.0"; got != want {
		t.Errorf("openapi: got %q, want %q", got, want)
	}
	names, ops := specOperations(t, doc)
	if len(names) == 0 {
		t.Fatal("openapi.yaml declares no operations")
	}
	ids := map[string]string{}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			op := ops[name]
			if op.OperationID == "" {
				t.Errorf("operationId: got none, want one")
			} else if other, dup := ids[op.OperationID]; dup {
				t.Errorf("operationId %q: got it on %s too, want it unique", op.OperationID, other)
			}
			ids[op.OperationID] = name
			var success []string
			for status := range op.Responses {
				if len(status) == 3 && status[0] == '2' {
					success = append(success, status)
				}
			}
			if len(success) == 0 {
				t.Errorf("responses: got %d statuses and no 2xx, want a 2xx response", len(op.Responses))
			}
		})
	}
}
