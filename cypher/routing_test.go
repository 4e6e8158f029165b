package cypher

import (
	"slices"
	"strconv"
	"testing"

	"github.com/ctxgraph/ctxgraph/model"
)

// On a cluster (a routing URI) reads go to the leader unless any member may answer them;
// a direct URI has one server to read from.
func TestReadsRouteToTheLeaderOnAClusterUnlessAnyMayAnswer(t *testing.T) {
	for _, tc := range []struct {
		uri       string
		anyReader bool
		leader    bool
	}{
		{"neo4j://db.internal:7687", false, true},
		{"neo4j+s://db.internal:7687", false, true},
		{"neo4j://db.internal:7687", true, false},
		{"bolt://db.internal:7687", false, false},
	} {
		s, err := Open(Config{URI: tc.uri, AnyReader: tc.anyReader}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.readsOnLeader != tc.leader {
			t.Errorf("%s (any reader %v): reads on the leader %v, want %v", tc.uri, tc.anyReader, s.readsOnLeader, tc.leader)
		}
		_ = s.driver.Close(t.Context())
	}
}

// On a cluster a session starts from the client's bookmarks and the process's; on one
// server (bolt://), which has applied every write it answered, from the client's alone.
func TestSessionsStartFromTheBookmarksTheyNeed(t *testing.T) {
	process := model.NewCausalChain([]string{"FB:process"})
	sent := model.NewCausalChain([]string{"FB:client"})
	none := model.NewCausalChain(nil)
	for _, tc := range []struct {
		name    string
		request *model.CausalChain
		direct  bool
		want    []string
	}{
		{"cluster, a client's bookmark", sent, false, []string{"FB:process", "FB:client"}},
		{"cluster, none sent", none, false, []string{"FB:process"}},
		{"cluster, background work", nil, false, []string{"FB:process"}},
		{"one server, a client's bookmark", sent, true, []string{"FB:client"}},
		{"one server, none sent", none, true, nil},
		{"one server, background work", nil, true, nil},
	} {
		got, _ := causalBookmarks{request: tc.request, process: process, direct: tc.direct}.GetBookmarks(t.Context())
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// The process's chain holds what its sessions start from, however many there were: on a
// cluster each session replaces the bookmarks it started from with the one it ended at; on
// one server, where sessions never send the process's, it holds none.
func TestTheProcessChainStaysBounded(t *testing.T) {
	for _, direct := range []bool{false, true} {
		process := model.NewCausalChain(nil)
		for i := range 1000 {
			b := causalBookmarks{request: model.NewCausalChain(nil), process: process, direct: direct}
			previous, _ := b.GetBookmarks(t.Context())
			_ = b.UpdateBookmarks(t.Context(), previous, []string{"FB:" + strconv.Itoa(i)})
		}
		if n := len(process.Bookmarks()); n > 1 || (direct && n != 0) {
			t.Errorf("direct %v: after 1,000 sessions the process holds %d bookmarks", direct, n)
		}
	}
}
