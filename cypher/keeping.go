package cypher

import (
	"context"
	"time"

	"github.com/ctxgraph/ctxgraph/model"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// What the store keeps of assembly records (DESIGN §10): every assembly keeps its counts;
// its full record while it is among the latest of its branch, or when it is kept (traced,
// sampled, of a failed run). The sweeper trims the rest in the background, so that the
// record stage an assembly waits for writes what it always wrote.

// The states of an assembly's record (ContextAssembly.recordState).
const (
	recordFull    = "full"
	recordKept    = "kept"
	recordTrimmed = "trimmed"
)

// recordState is the state an assembly's record starts in.
func recordState(k model.RecordKeeping) string {
	if k.Kept != "" {
		return recordKept
	}
	return recordFull
}

// The statements of the sweeps.
var (
	takeSweepLease            = newQuery[sweepLeaseParams, cursorRow]("TakeSweepLease")
	advanceSweepLease         = newQuery[advanceParams, cursorRow]("AdvanceSweepLease")
	branchesWithNewAssemblies = newQuery[newAssembliesParams, newAssembliesRow]("BranchesWithNewAssemblies")
	trimAssemblyRecords       = newQuery[trimParams, trimRow]("TrimAssemblyRecords")
)

type sweepLeaseParams struct {
	Name   string    `param:"name"`
	Holder string    `param:"holder"`
	Now    time.Time `param:"now"`
	Until  time.Time `param:"until"`
}

type advanceParams struct {
	Name   string    `param:"name"`
	Holder string    `param:"holder"`
	Cursor time.Time `param:"cursor"`
}

type cursorRow struct {
	Cursor time.Time `col:"cursor"`
}

type newAssembliesParams struct {
	Cursor time.Time `param:"cursor"`
	UpTo   time.Time `param:"upTo"`
	Limit  int       `param:"limit"`
}

type newAssembliesRow struct {
	AccountID string    `col:"accountId"`
	BranchID  string    `col:"branchId"`
	Last      time.Time `col:"last"`
	Keep      int64     `col:"keep"`
}

type trimParams struct {
	AccountID string    `param:"accountId"`
	BranchID  string    `param:"branchId"`
	Keep      int64     `param:"keep"`
	Skip      int64     `param:"skip"`
	Limit     int       `param:"limit"`
	Now       time.Time `param:"now"`
}

type trimRow struct {
	Trimmed []string `col:"trimmed"`
	Kept    []string `col:"kept"`
}

// recordSweep is the name of the assembly records' sweep lease.
const recordSweep = "assembly-records"

// RecordSweep bounds one sweep of assembly records: how long its lease holds, how long
// after an assembly is recorded it is looked at (records in flight have committed by then),
// and how many branches and records one transaction handles.
type RecordSweep struct {
	Holder   string
	Lease    time.Duration
	Grace    time.Duration
	Branches int
	Records  int
}

// DefaultRecordSweep is what servers sweep with.
var DefaultRecordSweep = RecordSweep{Lease: time.Minute, Grace: time.Minute, Branches: 200, Records: 50}

// SweepAssemblyRecords trims the records of the assemblies that have fallen out of their
// branch's latest since the last sweep (TrimAssemblyRecords), under the sweep's lease so
// that two servers never sweep at once (a server that dies leaves a lease that lapses). It
// reports how many records it trimmed, and held false when another server holds the lease.
// A branch is looked at once an assembly newer than the sweep's cursor was recorded on it
// at least Grace ago; records of runs that had not ended then are looked at again with the
// branch's next assembly.
func (s *Store) SweepAssemblyRecords(ctx context.Context, sw RecordSweep) (trimmed int, held bool, err error) {
	lease := func() (time.Time, bool, error) {
		now := s.Now().UTC()
		row, found, err := takeSweepLease.autoOne(ctx, s, neo4j.AccessModeWrite, sweepLeaseParams{Name: recordSweep, Holder: sw.Holder, Now: now, Until: now.Add(sw.Lease)})
		return row.Cursor, found, err
	}
	cursor, held, err := lease()
	if err != nil || !held {
		return 0, held, err
	}
	start := time.Now()
	upTo := s.Now().UTC().Add(-sw.Grace)
	for {
		branches, err := branchesWithNewAssemblies.autoAll(ctx, s, neo4j.AccessModeWrite, newAssembliesParams{Cursor: cursor, UpTo: upTo, Limit: sw.Branches})
		if err != nil {
			return trimmed, true, err
		}
		for _, b := range branches {
			for {
				p := trimParams{AccountID: b.AccountID, BranchID: b.BranchID, Keep: b.Keep, Skip: max(b.Keep-1, 0), Limit: sw.Records, Now: s.Now().UTC()}
				row, _, err := trimAssemblyRecords.autoOne(ctx, s, neo4j.AccessModeWrite, p)
				if err != nil {
					return trimmed, true, err
				}
				trimmed += len(row.Trimmed)
				if len(row.Trimmed)+len(row.Kept) < sw.Records {
					break
				}
			}
		}
		next := upTo
		if len(branches) == sw.Branches {
			next = branches[len(branches)-1].Last
		}
		if _, found, err := advanceSweepLease.autoOne(ctx, s, neo4j.AccessModeWrite, advanceParams{Name: recordSweep, Holder: sw.Holder, Cursor: next}); err != nil || !found {
			return trimmed, found, err
		}
		cursor = next
		if len(branches) < sw.Branches || next.Equal(upTo) {
			return trimmed, true, nil
		}
		if time.Since(start) > sw.Lease/2 {
			// Renew before the lease could lapse under a long sweep.
			if cursor, held, err = lease(); err != nil || !held {
				return trimmed, held, err
			}
			start = time.Now()
		}
	}
}

// RunRecordSweeper sweeps assembly records every `every` until ctx ends (SweepAssemblyRecords);
// failures wait for the next round.
func (s *Store) RunRecordSweeper(ctx context.Context, sw RecordSweep, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		_, _, _ = s.SweepAssemblyRecords(ctx, sw)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// conversationFootprint estimates what a conversation takes in the store, by label.
var conversationFootprint = newQuery[conversationParams, FootprintRow]("ConversationFootprint")

type conversationParams struct {
	AccountID      string `param:"accountId"`
	ConversationID string `param:"conversationId"`
}

// FootprintRow is what the nodes of one label of a conversation take, with their outgoing
// relationships, in Neo4j's record format (ConversationFootprint.cypher says how).
type FootprintRow struct {
	Label         string `col:"label"`
	Nodes         int64  `col:"nodes"`
	Relationships int64  `col:"relationships"`
	Bytes         int64  `col:"bytes"`
}

// ConversationFootprint estimates what a conversation's nodes and relationships take in the
// store, by label: for the benchmark's bytes per generation. It reads every node of the
// conversation.
func (s *Store) ConversationFootprint(ctx context.Context, accountID, conversationID string) ([]FootprintRow, error) {
	return conversationFootprint.autoAll(ctx, s, neo4j.AccessModeRead, conversationParams{AccountID: accountID, ConversationID: conversationID})
}
