package cypher

import "testing"

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
