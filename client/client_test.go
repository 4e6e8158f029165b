package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

// echoHandler answers every request with what it received, or with the API's error object
// when the path is /fail.
type echoHandler struct{}

func (echoHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.URL.Path == "/fail" {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"code":"invalid","message":"role must be one of: user","field":"role"}}`)
		return
	}
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]string{
		"id": r.Method + " " + r.URL.RequestURI(), "branchId": r.Header.Get("Authorization") + "|" + r.Header.Get("Content-Type") + "|" + string(body),
	})
}

func TestDoSendsBodiesAsTheAPIReadsThem(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		body any
		want string
	}{
		{"typed body keeps HTML characters and raw JSON", ToolCall{Tool: "q", Arguments: json.RawMessage(`{"z": "a&b<c>", "a": 1.0}`), CallID: "t1"},
			`Bearer k|application/json|{"tool":"q","arguments":{"z":"a&b<c>","a":1.0},"callId":"t1"}`},
		{"encoded body sent as it is", []byte(`{"title": "x"}`), `Bearer k|application/json|{"title": "x"}`},
		{"no body", nil, `Bearer k||`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got Created
			if err := (&Client{Handler: echoHandler{}, Key: "k"}).Do(ctx, http.MethodPost, "/v1/x", tc.body, &got); err != nil {
				t.Fatal(err)
			}
			if got.BranchID != tc.want || got.ID != "POST /v1/x" {
				t.Errorf("got %q for %q, want %q for POST /v1/x", got.BranchID, got.ID, tc.want)
			}
		})
	}
}

func TestDoReturnsTheAPIsError(t *testing.T) {
	c := &Client{Handler: echoHandler{}}
	var raw Response
	err := c.Do(context.Background(), http.MethodPost, "/fail", Message{Role: "robot"}, &raw)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want an *Error", err)
	}
	if e.Status != http.StatusBadRequest || e.Code != "invalid" || e.Field != "role" || e.Message != "role must be one of: user" {
		t.Errorf("got status %d, code %q, field %q, message %q; want 400, invalid, role and the server's message", e.Status, e.Code, e.Field, e.Message)
	}
	if string(e.Request) != `{"role":"robot","content":""}` {
		t.Errorf("got request body %s, want the message as sent", e.Request)
	}
	if raw.Status != http.StatusBadRequest || string(raw.Body) != string(e.Response) {
		t.Errorf("got the raw answer %d %s, want the 400 and its body", raw.Status, raw.Body)
	}
}

func TestTypedMethodsOverHTTP(t *testing.T) {
	srv := httptest.NewServer(echoHandler{})
	defer srv.Close()
	c := New(srv.URL+"/", "k")
	got, err := c.AppendMessage(context.Background(), "br/1", Message{Role: "user", Content: "hi", At: "2026-01-01T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "POST /v1/branches/br%2F1/messages"; got.ID != want {
		t.Errorf("got %q, want %q", got.ID, want)
	}
	if want := `Bearer k|application/json|{"role":"user","content":"hi","at":"2026-01-01T00:00:00Z"}`; got.BranchID != want {
		t.Errorf("got %q, want %q", got.BranchID, want)
	}
	var other Created
	if err := c.WithKey("other").WithHeader("Content-Type", "text/plain").Do(context.Background(), http.MethodGet, "/v1/assemblies/a/explain?ref=x", nil, &other); err != nil {
		t.Fatal(err)
	}
	if want := "Bearer other|text/plain|"; other.BranchID != want || c.Key != "k" || c.Header != nil {
		t.Errorf("WithKey and WithHeader: got %q (and the original key %q, headers %v), want %q and the original kept", other.BranchID, c.Key, c.Header, want)
	}
}

func TestEventsArriveOneByOneAndStopTheStream(t *testing.T) {
	stopped := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, ": open\n\nevent: run.started\ndata: {\"runId\":\"run_1\"}\n\nevent: message.delta\ndata: {\"text\":\"a\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the client goes away: nothing more is written
		close(stopped)
	}))
	defer srv.Close()
	var got []string
	errEnough := errors.New("enough")
	err := New(srv.URL, "k").GenerateStream(context.Background(), GenerationRequest{BranchID: "b", ParticipantIDs: []string{"p"}},
		func(e Event) error {
			got = append(got, e.Name+" "+string(e.Data))
			if e.Name == "message.delta" {
				return errEnough
			}
			return nil
		})
	if !errors.Is(err, errEnough) {
		t.Fatalf("got %v, want the function's error", err)
	}
	if want := []string{`run.started {"runId":"run_1"}`, `message.delta {"text":"a"}`}; !slices.Equal(got, want) {
		t.Errorf("got events %q, want %q", got, want)
	}
	<-stopped

	var names []string
	if err := (&Client{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "event: done\ndata: {}\n\n")
	})}).Do(context.Background(), http.MethodPost, "/v1/generations", nil, func(e Event) error {
		names = append(names, e.Name)
		return nil
	}); err != nil || !slices.Equal(names, []string{"done"}) {
		t.Errorf("a func literal as out, in-process: got %v and events %v, want done", err, names)
	}
}

// A causal client sends back the bookmark of the answer before, to whichever server, and
// takes a streamed answer's from its trailer.
func TestCausalClientSendsBackTheLatestBookmark(t *testing.T) {
	var got []string
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("X-Ctxgraph-Bookmark"))
		n++
		if r.URL.Path == "/stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Trailer", "X-Ctxgraph-Bookmark")
			w.Header().Set("X-Ctxgraph-Bookmark", "head")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, "event: done\ndata: {}\n\n")
			w.Header().Set("X-Ctxgraph-Bookmark", "tail")
			return
		}
		w.Header().Set("X-Ctxgraph-Bookmark", "b"+string(rune('0'+n)))
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	one := New(srv.URL, "k").Causal()
	other := New(srv.URL, "k")
	other.Chain = one.Chain // another server, one chain
	ctx := context.Background()
	for _, c := range []*Client{one, other, one} {
		if err := c.Do(ctx, "GET", "/x", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := one.Do(ctx, "POST", "/stream", nil, Events(func(Event) error { return nil })); err != nil {
		t.Fatal(err)
	}
	if err := other.Do(ctx, "GET", "/x", nil, nil); err != nil {
		t.Fatal(err)
	}
	if want := []string{"", "b1", "b2", "b3", "tail"}; !slices.Equal(got, want) {
		t.Fatalf("sent bookmarks %q, want %q", got, want)
	}
}
