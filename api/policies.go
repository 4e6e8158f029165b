package api

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/ctxgraph/ctxgraph/policy"
)

// createPolicyRequest is POST /v1/policies: the new version's name, the version it is
// based on ("" is the account's default) and the settings it changes, named as
// GET /v1/policies shows them. A setting left out (or null) keeps the base's value, except
// promotion and recall, which null turns off (records, which null returns to the defaults).
type createPolicyRequest struct {
	Name    string `json:"name" validate:"required,max=64"`
	BasedOn string `json:"basedOn" validate:"max=200"`
	// The settings a new version may change (policy.Settings).
	Description            *string             `json:"description"`
	ProviderClasses        map[string][]string `json:"providerClasses"`
	ZeroRetentionProviders []string            `json:"zeroRetentionProviders"`
	NeverSent              []string            `json:"neverSent"`
	TTL                    map[string]string   `json:"ttl"`
	StaleHandling          *string             `json:"staleHandling"`
	WindowMessages         *int                `json:"windowMessages"`
	RehydrationBytes       *int64              `json:"rehydrationBytes"`
	ConflictHandling       *string             `json:"conflictHandling"`
	DefaultTokenBudget     *int                `json:"defaultTokenBudget"`
	BudgetPriorities       []string            `json:"budgetPriorities"`
	Promotion              json.RawMessage     `json:"promotion"`
	Recall                 json.RawMessage     `json:"recall"`
	Records                json.RawMessage     `json:"records"`
	Retention              json.RawMessage     `json:"retention"`
}

// changed lists the settings the request names (every field but name and basedOn), each
// as its JSON value.
func (p createPolicyRequest) changed() (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	v := reflect.ValueOf(p)
	for i := range v.NumField() {
		f := v.Field(i)
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if f.Kind() == reflect.String || f.IsNil() {
			continue
		}
		if raw, ok := f.Interface().(json.RawMessage); ok {
			out[name] = raw
			continue
		}
		b, err := json.Marshal(f.Interface())
		if err != nil {
			return nil, model.Internal("encoding a policy setting", err)
		}
		out[name] = b
	}
	return out, nil
}

type defaultPolicyRequest struct {
	PolicyVersion string `json:"policyVersion" validate:"required,max=200"`
}

func (s *Server) policies(c echo.Context) error {
	lib, err := s.libraryOrUnavailable()
	if err != nil {
		return err
	}
	list, err := lib.List(c.Request().Context(), accountOf(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"policies": list, "servedAt": time.Now().UTC()})
}

func (s *Server) createPolicy(c echo.Context) error {
	lib, err := s.libraryOrUnavailable()
	if err != nil {
		return err
	}
	var req createPolicyRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	settings, err := req.changed()
	if err != nil {
		return err
	}
	v, created, err := lib.Create(c.Request().Context(), accountOf(c), req.Name, req.BasedOn, settings)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	answering(c, status)
	return c.JSON(status, v)
}

func (s *Server) setDefaultPolicy(c echo.Context) error {
	lib, err := s.libraryOrUnavailable()
	if err != nil {
		return err
	}
	var req defaultPolicyRequest
	if err := s.bind(c, &req); err != nil {
		return err
	}
	return respond(c, http.StatusOK, func(ctx context.Context) (any, error) {
		return lib.SetDefault(ctx, accountOf(c), req.PolicyVersion)
	})
}

// providerView is a configured provider as GET /v1/providers shows it: what it receives in
// full and whether it retains nothing, under the account's default version.
type providerView struct {
	model.ProviderInfo
	Receives      []string `json:"receives"`
	ZeroRetention bool     `json:"zeroRetention"`
}

func (s *Server) providers(c echo.Context) error {
	lib, err := s.libraryOrUnavailable()
	if err != nil {
		return err
	}
	v, err := lib.Resolve(c.Request().Context(), accountOf(c), "")
	if err != nil {
		return err
	}
	out := make([]providerView, 0, len(s.providerInfo))
	for _, p := range s.providerInfo {
		out = append(out, providerView{ProviderInfo: p, Receives: v.Receives(p.Name), ZeroRetention: v.RetainsNothing(p.Name)})
	}
	return c.JSON(http.StatusOK, map[string]any{"providers": out, "policyVersion": v.ID})
}

// libraryOrUnavailable answers 503 when the server keeps no policy versions.
func (s *Server) libraryOrUnavailable() (policy.Library, error) {
	if s.policyLibrary == nil {
		return nil, &httpError{status: http.StatusServiceUnavailable, message: "policy versions are not configured on this server"}
	}
	return s.policyLibrary, nil
}
