// Package client is the Go client of ctxgraph's REST API (DESIGN §5 and §6): typed request
// and response bodies with the contract's field names, one request function (Client.Do)
// and one error type (Error) carrying the HTTP status and the API's
// {"error": {"code", "message", "field"}}.
//
// The typed methods (CreateConversation, RecordToolResult, Assemble, Generate, ...) cover
// the endpoints an agent runtime calls; Do sends anything else, including bodies encoded
// beforehand. A Client talks to a server over HTTP, or, with Handler set, to an
// http.Handler in the same process (tests, benchmarks, the seed generator).
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/ctxgraph/ctxgraph/model"
)

// Client sends requests to one ctxgraph server as one account. Its zero value is not
// usable: set BaseURL (or Handler) and Key. A Client is safe for concurrent use.
type Client struct {
	// BaseURL is the server's address, for example http://127.0.0.1:8080.
	BaseURL string
	// Key is the bearer API key sent with every request; it names the account.
	Key string
	// HTTP sends the requests; nil means http.DefaultClient.
	HTTP *http.Client
	// Handler, when set, serves the requests in-process instead of HTTP (an api.Server).
	Handler http.Handler
	// Header holds headers sent with every request besides the key's (an
	// Idempotency-Key, say); WithHeader adds one to a copy of the client.
	Header http.Header
	// Chain, when set, makes the client's requests one causal chain (DESIGN §11): each
	// sends back the bookmarks of the answers before it (X-Ctxgraph-Bookmark) and takes
	// those of its own answer, so that a conversation whose requests go to several servers
	// reads its own writes on a Neo4j cluster whose followers answer reads. Copies of the
	// client share it; Causal returns a copy with a chain of its own.
	Chain *model.CausalChain
}

// Causal returns a copy of c whose requests form a causal chain of their own (Chain).
func (c *Client) Causal() *Client {
	cp := *c
	cp.Chain = model.NewCausalChain(nil)
	return &cp
}

// New returns a client of the server at baseURL that authenticates with key.
func New(baseURL, key string) *Client {
	return &Client{BaseURL: strings.TrimSuffix(baseURL, "/"), Key: key}
}

// WithKey returns a copy of c that authenticates with key: another account on the same
// server and transport.
func (c *Client) WithKey(key string) *Client {
	cp := *c
	cp.Key = key
	return &cp
}

// WithHeader returns a copy of c that also sends the header name with value: for example
// c.WithHeader("Idempotency-Key", k) for a write that may be retried.
func (c *Client) WithHeader(name, value string) *Client {
	cp := *c
	cp.Header = c.Header.Clone()
	if cp.Header == nil {
		cp.Header = http.Header{}
	}
	cp.Header.Set(name, value)
	return &cp
}

// Response is a whole answer as received. Passed as Do's out, it receives the answer
// whatever its status, undecoded.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Error is an answer outside 2xx: the request, the status and, when the body is the API's
// error object, its code, message and field.
type Error struct {
	Method, Path string
	Status       int
	// Code, Message and Field are the API's error object (Field names the offending
	// request field, when there is one); empty when the body is not one.
	Code, Message, Field string
	// Request and Response are the bodies sent and received.
	Request, Response []byte
}

// Error names the request, the status and both bodies, clipped.
func (e *Error) Error() string {
	return fmt.Sprintf("%s %s answered %d: %s (request body: %s)", e.Method, e.Path, e.Status,
		clip(e.Response, 2000), clip(e.Request, 2000))
}

// Event is one event of a streamed answer (text/event-stream, DESIGN §6 "Streaming").
type Event struct {
	// Name is the event's name: model.EventRunStarted, model.EventMessageDelta, ...
	Name string
	// Data is the event's JSON.
	Data json.RawMessage
}

// Events (or a func(Event) error), passed as Do's out, reads a streamed 2xx answer event by event as it arrives
// (over HTTP; a Handler's answer arrives whole) and calls the function with each. An error
// it returns ends the request, closing the stream, and Do returns it.
type Events func(Event) error

// Do is the one request function: it sends method and path (which may carry a query) with
// body and decodes a 2xx answer into out.
//
// body is nil for none; []byte and json.RawMessage are sent as they are; anything else is
// encoded with Marshal. out is nil to discard the answer, a *Response to receive it as it
// came (whatever its status), Events to read a stream, or a pointer to decode the JSON
// into. An answer outside 2xx returns *Error; a failure to send returns the transport's
// error.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	var payload []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		payload = b
	case json.RawMessage:
		payload = b
	default:
		var err error
		if payload, err = Marshal(body); err != nil {
			return fmt.Errorf("%s %s: encoding the body: %w", method, path, err)
		}
	}
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.BaseURL, "/")+path, reader)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	for name, values := range c.Header {
		req.Header[name] = values
	}
	var sent []string
	if c.Chain != nil {
		if sent = c.Chain.Bookmarks(); len(sent) > 0 {
			req.Header.Set(model.BookmarkField, strings.Join(sent, ","))
		}
	}
	events, _ := out.(Events)
	if f, ok := out.(func(Event) error); ok {
		events = f
	}
	resp, err := c.roundTrip(req, events)
	if c.Chain != nil && resp.Header != nil {
		if answered := resp.Header.Get(model.BookmarkField); answered != "" {
			c.Chain.Advance(sent, strings.Split(answered, ","))
		}
	}
	var stopped eventError
	if errors.As(err, &stopped) {
		return stopped.err
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if r, ok := out.(*Response); ok {
		*r = resp
	}
	if resp.Status < 200 || resp.Status > 299 {
		return newError(method, path, payload, resp)
	}
	if _, raw := out.(*Response); out == nil || raw || events != nil {
		return nil
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return fmt.Errorf("%s %s answered %d with a body that is not the expected JSON (%v): %s",
			method, path, resp.Status, err, clip(resp.Body, 2000))
	}
	return nil
}

// roundTrip sends req in-process or over HTTP and reads the whole answer, or, when events
// is set and the status is 2xx, the stream of events.
func (c *Client) roundTrip(req *http.Request, events Events) (Response, error) {
	if c.Handler != nil {
		if req.Body == nil {
			req.Body = http.NoBody // a server's handler always has a body to read
		}
		rec := httptest.NewRecorder()
		c.Handler.ServeHTTP(rec, req)
		resp := Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
		if events != nil && resp.Status >= 200 && resp.Status <= 299 {
			return resp, readEvents(bytes.NewReader(resp.Body), events)
		}
		return resp, nil
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	if events != nil && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		err := readEvents(resp.Body, events)
		// A streamed answer's bookmark of its recorded turn comes as a trailer, readable
		// once the body is read to its end (not when the caller stopped the stream).
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			if b := resp.Trailer.Get(model.BookmarkField); b != "" {
				resp.Header.Set(model.BookmarkField, b)
			}
		}
		return Response{Status: resp.StatusCode, Header: resp.Header}, err
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Response{}, fmt.Errorf("reading the response: %w", err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// eventError carries the error an Events function returned, to be returned as it is.
type eventError struct{ err error }

func (e eventError) Error() string { return e.err.Error() }

// readEvents reads text/event-stream from r and calls events with each event: `event:`
// names it, `data:` lines are its data, a blank line ends it, comment lines keep the
// stream open and are skipped.
func readEvents(r io.Reader, events Events) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var e Event
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if e.Name != "" || data != nil {
				e.Data = json.RawMessage(data)
				if err := events(e); err != nil {
					return eventError{err}
				}
			}
			e, data = Event{}, nil
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event:"):
			e.Name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
		}
	}
	return sc.Err()
}

func newError(method, path string, request []byte, resp Response) *Error {
	e := &Error{Method: method, Path: path, Status: resp.Status, Request: request, Response: resp.Body}
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Field   string `json:"field"`
		} `json:"error"`
	}
	if json.Unmarshal(resp.Body, &body) == nil {
		e.Code, e.Message, e.Field = body.Error.Code, body.Error.Message, body.Error.Field
	}
	return e
}

// Marshal encodes v as the client sends request bodies: JSON without HTML escaping, so that
// text keeps `&`, `<` and `>` as written, and raw JSON values (json.RawMessage) compacted
// but otherwise kept (key order, number literals). It is model.EncodeJSON, the encoding the
// server answers with.
func Marshal(v any) ([]byte, error) {
	return model.EncodeJSON(v)
}

// clip returns b without surrounding space, cut to n bytes.
func clip(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
