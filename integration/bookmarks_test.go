package integration

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxgraph/ctxgraph/cypher"
	"github.com/ctxgraph/ctxgraph/server"
)

// routingStore is a store on the suite's Neo4j through a routing URI (neo4j://; a single
// instance routes too) whose reads may go to any member, as on a cluster with
// CTXGRAPH_NEO4J_READS=any.
func routingStore(t *testing.T) *cypher.Store {
	t.Helper()
	_, rest, ok := strings.Cut(neo4jServer.URI, "://")
	if !ok {
		t.Fatalf("the suite's Neo4j URI %q has no scheme", neo4jServer.URI)
	}
	s, err := server.OpenStore(cypher.Config{URI: "neo4j://" + rest, User: neo4jServer.User, Password: neo4jServer.Password,
		Database: neo4jServer.Database, AnyReader: true}, blobDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(t.Context()) })
	return s
}

// bookmarkTx reads the transaction id out of a Neo4j 5 bookmark: "FB:" and the base64 of a
// PackStream list holding the database's 16-byte id, the id of the last transaction
// applied, and an empty list. The test reads it to know which writes a bookmark covers and
// to make one that no member has applied yet; Neo4j's format is its own, so a change in it
// fails here first.
func bookmarkTx(t *testing.T, bookmark string) (database []byte, id int64) {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(bookmark, "FB:"))
	if err != nil || !strings.HasPrefix(bookmark, "FB:") || len(raw) < 20 || !bytes.Equal(raw[:3], []byte{0x91, 0xcc, 0x10}) {
		t.Fatalf("bookmark %q is not in Neo4j 5's format", bookmark)
	}
	database, rest := raw[3:19], raw[19:]
	switch {
	case rest[0] < 0x80:
		id = int64(rest[0])
	case rest[0] == 0xc8:
		id = int64(int8(rest[1]))
	case rest[0] == 0xc9:
		id = int64(int16(binary.BigEndian.Uint16(rest[1:])))
	case rest[0] == 0xca:
		id = int64(int32(binary.BigEndian.Uint32(rest[1:])))
	case rest[0] == 0xcb:
		id = int64(binary.BigEndian.Uint64(rest[1:]))
	default:
		t.Fatalf("bookmark %q: transaction id of marker %#x", bookmark, rest[0])
	}
	return database, id
}

// bookmarkAt is the bookmark of transaction id of database.
func bookmarkAt(database []byte, id int64) string {
	raw := append([]byte{0x91, 0xcc, 0x10}, database...)
	raw = append(raw, 0xcb)
	raw = binary.BigEndian.AppendUint64(raw, uint64(id))
	raw = append(raw, 0x90)
	return "FB:" + base64.StdEncoding.EncodeToString(raw)
}

// answeredBookmark is the one bookmark an answer carries.
func answeredBookmark(t *testing.T, r response) string {
	t.Helper()
	b := r.header.Get("X-Ctxgraph-Bookmark")
	if b == "" || strings.Contains(b, ",") {
		t.Fatalf("answer %d carries X-Ctxgraph-Bookmark %q, want one bookmark", r.status, b)
	}
	return b
}

// A write answers its bookmark; a read that sends one back is served once the database has
// applied it (it waits for writes that had not happened when it was sent), and sees every
// write the bookmark covers.
func TestBookmarksAreAnsweredAndHonoured(t *testing.T) {
	h := newHarnessWith(t, routingStore(t), "")
	w := h.world()
	first := h.call("POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "user", "content": "m0"})
	database, firstTx := bookmarkTx(t, answeredBookmark(t, first))
	second := h.call("POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "user", "content": "m1"})
	if _, tx := bookmarkTx(t, answeredBookmark(t, second)); tx <= firstTx {
		t.Fatalf("the second write's bookmark is at transaction %d, the first's at %d", tx, firstTx)
	}

	// A bookmark far enough ahead that the suite's other work does not reach it while the
	// read waits: only the writes below do.
	const ahead = 150
	target := firstTx + ahead
	read := make(chan response, 1)
	go func() {
		read <- h.call("GET", "/v1/branches/"+w.branch+"/history", nil, "X-Ctxgraph-Bookmark", bookmarkAt(database, target))
	}()
	time.Sleep(300 * time.Millisecond)
	type write struct {
		content string
		tx      int64
	}
	var writes []write
	var got response
wait:
	for i := 0; ; i++ {
		select {
		case got = <-read:
			break wait
		default:
		}
		if i > 3*ahead {
			t.Fatalf("the read waiting for transaction %d did not answer after %d writes", target, i)
		}
		content := fmt.Sprintf("w%d", i)
		r := h.call("POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "user", "content": content})
		_, tx := bookmarkTx(t, answeredBookmark(t, r))
		writes = append(writes, write{content, tx})
	}
	if got.status != 200 {
		t.Fatalf("the read answered %d: %s", got.status, got.body)
	}
	seen := transcript(got.obj(t))
	covered := 0
	for _, w := range writes {
		if w.tx <= target {
			covered++
			if !slices.Contains(seen, "message:"+w.content) {
				t.Errorf("the read sent back a bookmark at transaction %d but misses %q, written at %d", target, w.content, w.tx)
			}
		}
	}
	if covered == 0 {
		t.Fatalf("the read answered before any write sent after it: it did not wait for its bookmark (writes %v)", writes)
	}
	if b := answeredBookmark(t, got); b == "" {
		t.Fatal("the read answered no bookmark")
	}
	t.Logf("the read waited for %d of %d writes", covered, len(writes))
}

// A bookmark the database did not make is refused with 400 naming the header, and the
// write that sent it writes nothing; so is a header that is no list of bookmarks.
func TestBadBookmarksAreRefused(t *testing.T) {
	h := newHarnessWith(t, routingStore(t), "")
	w := h.world()
	before := transcript(h.must(200, "GET", "/v1/branches/"+w.branch+"/history", nil))
	for _, bad := range []string{"FB:garbage", "G[", "FB:a b", strings.Repeat("FB:x,", 17)} {
		r := h.call("POST", "/v1/branches/"+w.branch+"/messages", map[string]any{"role": "user", "content": "never"}, "X-Ctxgraph-Bookmark", bad)
		h.expectError(r, 400, "invalid", "X-Ctxgraph-Bookmark")
	}
	// Tool calls and results are written in batches with other requests' (group commit):
	// a refused bookmark fails its own request only.
	refused := make(chan response, 1)
	go func() {
		refused <- h.call("POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "sheet_read", "arguments": map[string]any{}},
			"X-Ctxgraph-Bookmark", "FB:garbage")
	}()
	h.must(201, "POST", "/v1/runs/"+w.run+"/tool-calls", map[string]any{"tool": "sheet_read", "arguments": map[string]any{}})
	h.expectError(<-refused, 400, "invalid", "X-Ctxgraph-Bookmark")
	before = append(before, "tool_call:sheet_read")
	if after := transcript(h.must(200, "GET", "/v1/branches/"+w.branch+"/history", nil)); !slices.Equal(before, after) {
		t.Fatalf("a refused write changed the history: %v, then %v", before, after)
	}
}

// A streamed generation sends its headers before its turn is recorded: the bookmark in its
// trailer covers the recorded turn, and is later than the one in its headers.
func TestStreamedAnswerSendsItsBookmarkAsATrailer(t *testing.T) {
	h := newHarnessWith(t, routingStore(t), "")
	w := h.world()
	echo := str(h.must(201, "POST", "/v1/conversations/"+w.conv+"/participants", map[string]any{"kind": "model", "name": "echo-bot", "provider": "echo"}), "id")
	srv := httptest.NewServer(h.srv)
	defer srv.Close()
	body := fmt.Sprintf(`{"branchId":%q,"participantIds":[%q],"userMessage":{"content":"hello"},"stream":true}`, w.branch, echo)
	req, err := http.NewRequest("POST", srv.URL+"/v1/generations", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+h.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("stream answered %d", resp.StatusCode)
	}
	head := resp.Header.Get("X-Ctxgraph-Bookmark")
	lines := 0
	for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
		lines++
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	tail := resp.Trailer.Get("X-Ctxgraph-Bookmark")
	if head == "" || tail == "" {
		t.Fatalf("header bookmark %q, trailer bookmark %q after %d lines: want both", head, tail, lines)
	}
	_, headTx := bookmarkTx(t, head)
	_, tailTx := bookmarkTx(t, tail)
	if tailTx <= headTx {
		t.Fatalf("the trailer's bookmark (transaction %d) is not after the header's (%d)", tailTx, headTx)
	}
}
