package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/ctxgraph/ctxgraph/client"
)

// The floor phase: what a request costs before ctxgraph does any work (loopback HTTP, a
// Bolt handshake, a small read).

type floorProbe struct {
	Name   string
	What   string
	Stats  stats
	Errors int
	Err    string
}

func (b *bench) runFloor(ctx context.Context) {
	n := b.o.floorN
	var probes []floorProbe

	probes = append(probes, sample("store.Ping (driver VerifyConnectivity)",
		"the driver's VerifyConnectivity through cypher.Store.Ping (no Cypher statement; see the note below)", n,
		func() (time.Duration, error) {
			start := time.Now()
			err := b.store.Ping(ctx)
			return time.Since(start), err
		}))

	probes = append(probes, sample("Bolt RETURN 1 (store.RoundTrip)",
		"the issue's bare Bolt round trip: `RETURN 1` in a managed read transaction through the driver (session, BEGIN, RUN and PULL, COMMIT on a pooled connection)", n,
		func() (time.Duration, error) {
			start := time.Now()
			err := b.store.RoundTrip(ctx)
			return time.Since(start), err
		}))

	if addr, ok := boltAddr(b.o.neo4jURI); ok {
		probes = append(probes, sample("Bolt handshake (TCP connect + version negotiation)",
			"a fresh TCP connection to the Bolt port, the Bolt preamble and version proposal, the server's 4-byte answer; no driver, no Cypher", n,
			func() (time.Duration, error) { return boltHandshake(addr) }))
	}

	probes = append(probes, sample("GET /healthz over REST",
		"loopback HTTP + Echo routing; Neo4j not involved", n,
		func() (time.Duration, error) {
			return b.expect(ctx, "", http.MethodGet, "/healthz", nil, http.StatusOK)
		}))
	probes = append(probes, sample("GET /readyz over REST",
		"loopback HTTP + store.Ping", n,
		func() (time.Duration, error) { return b.expect(ctx, "", http.MethodGet, "/readyz", nil, http.StatusOK) }))

	// The smallest Cypher round trip reachable over REST: read a one-branch conversation.
	st, body, _, err := b.call(ctx, b.key, http.MethodPost, "/v1/conversations", mustJSON(client.Conversation{Title: "ctxbench floor"}))
	var conv struct {
		ID string `json:"id"`
	}
	if err == nil && st == http.StatusCreated {
		_ = json.Unmarshal(body, &conv)
	}
	if conv.ID != "" {
		b.convs = append(b.convs, b.key+"|"+conv.ID)
		probes = append(probes, sample("GET /v1/conversations/{id} over REST",
			"loopback HTTP + auth + one read transaction running one small indexed Cypher query (ReadConversation on a one-branch conversation)", n,
			func() (time.Duration, error) {
				return b.expect(ctx, b.key, http.MethodGet, "/v1/conversations/"+conv.ID, nil, http.StatusOK)
			}))
	} else {
		b.failures = append(b.failures, fmt.Sprintf("floor: creating the probe conversation answered %d %s (%v)", st, clip(body), err))
	}
	b.floor = probes
	for _, p := range probes {
		logf("floor %s: p50 %s p99 %s errors %d", p.Name, ms(p.Stats.P50), ms(p.Stats.P99), p.Errors)
		if p.Errors > 0 {
			b.failures = append(b.failures, fmt.Sprintf("floor %s: %d errors (%s)", p.Name, p.Errors, p.Err))
		}
	}
}

// sample times fn n times after n/10 untimed warm-up calls.
func sample(name, what string, n int, fn func() (time.Duration, error)) floorProbe {
	p := floorProbe{Name: name, What: what}
	for i := 0; i < n/10; i++ {
		_, _ = fn()
	}
	var ds []time.Duration
	for i := 0; i < n; i++ {
		d, err := fn()
		if err != nil {
			p.Errors++
			p.Err = err.Error()
			continue
		}
		ds = append(ds, d)
	}
	p.Stats = summarize(ds)
	return p
}

func (b *bench) expect(ctx context.Context, key, method, p string, body []byte, want int) (time.Duration, error) {
	st, out, d, err := b.call(ctx, key, method, p, body)
	if err != nil {
		return d, err
	}
	if st != want {
		return d, fmt.Errorf("%s %s answered %d, want %d: %s", method, p, st, want, clip(out))
	}
	return d, nil
}

func boltAddr(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "bolt" && u.Scheme != "neo4j") {
		return "", false
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "7687")
	}
	return host, true
}

// boltHandshake opens a TCP connection, proposes Bolt 5.0–5.8 and 4.4 and reads the
// server's choice: the cheapest exchange that the Bolt server itself answers.
func boltHandshake(addr string) (time.Duration, error) {
	start := time.Now()
	c, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	msg := []byte{0x60, 0x60, 0xB0, 0x17,
		0x00, 0x08, 0x08, 0x05, // 5.8 down to 5.0
		0x00, 0x00, 0x04, 0x04, // 4.4
		0, 0, 0, 0, 0, 0, 0, 0}
	if _, err := c.Write(msg); err != nil {
		return 0, err
	}
	var v [4]byte
	if _, err := io.ReadFull(c, v[:]); err != nil {
		return 0, err
	}
	d := time.Since(start)
	if v == [4]byte{} {
		return d, errors.New("the server accepted none of the proposed Bolt versions")
	}
	return d, nil
}
