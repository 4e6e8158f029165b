package cypher

import (
	"context"
	"encoding/json"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/ctxgraph/ctxgraph/model"
)

// TickRetention is how long a schedule's fired ticks are kept (with their STARTED edges to
// the runs they started): a claim prunes its schedule's older ticks a few at a time. A tick
// behind its schedule's nextRunAt can never be claimed again, so pruning it loses only
// history that the runs keep anyway.
const TickRetention = 24 * time.Hour

// CreateSchedule writes a schedule on a branch of its conversation.
func (s *Store) CreateSchedule(ctx context.Context, accountID string, in model.NewSchedule) (model.Schedule, error) {
	createdAt, recordedAt := s.stamps(in.At)
	tools, err := json.Marshal(orNoTools(in.Tools))
	if err != nil {
		return model.Schedule{}, model.Internal("encoding the schedule's tools failed", err)
	}
	return writeTx(ctx, s, func(t *tx) (model.Schedule, error) {
		rec, err := t.one("CreateSchedule", map[string]any{
			"id": newID("sch"), "accountId": accountID, "conversationId": in.ConversationID, "branchId": in.BranchID,
			"participantIds": orEmpty(in.ParticipantIDs), "cron": in.Cron, "timezone": in.Timezone, "prompt": in.Prompt,
			"policyVersion": nullable(in.PolicyVersion), "tokenBudget": nullableInt(in.TokenBudget), "tools": string(tools),
			"enabled": in.Enabled, "nextRunAt": nullableTime(in.NextRunAt), "createdAt": createdAt, "recordedAt": recordedAt,
		})
		if err != nil {
			return model.Schedule{}, err
		}
		if rec == nil {
			return model.Schedule{}, model.NotFound("conversation", in.ConversationID)
		}
		sc := scheduleOf(nodeProps(rec, "s"))
		return sc, t.answer(sc, sc.ConversationID, "")
	})
}

// Schedules lists a conversation's schedules, oldest first.
func (s *Store) Schedules(ctx context.Context, accountID, conversationID string) ([]model.Schedule, error) {
	rec, err := single(ctx, s, neo4j.AccessModeRead, "ConversationSchedules", map[string]any{"conversationId": conversationID, "accountId": accountID})
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, model.NotFound("conversation", conversationID)
	}
	out := []model.Schedule{}
	for _, v := range value(rec, "schedules").([]any) {
		out = append(out, scheduleOf(asProps(v)))
	}
	return out, nil
}

// Schedule reads one schedule.
func (s *Store) Schedule(ctx context.Context, accountID, id string) (model.Schedule, error) {
	rec, err := single(ctx, s, neo4j.AccessModeRead, "ReadSchedule", map[string]any{"id": id, "accountId": accountID})
	if err != nil {
		return model.Schedule{}, err
	}
	if rec == nil {
		return model.Schedule{}, model.NotFound("schedule", id)
	}
	return scheduleOf(nodeProps(rec, "s")), nil
}

// DeleteSchedule deletes a schedule.
func (s *Store) DeleteSchedule(ctx context.Context, accountID, id string) error {
	_, err := writeTx(ctx, s, func(t *tx) (struct{}, error) {
		rec, err := t.one("DeleteSchedule", map[string]any{"id": id, "accountId": accountID})
		if err != nil {
			return struct{}{}, err
		}
		if rec == nil {
			return struct{}{}, model.NotFound("schedule", id)
		}
		return struct{}{}, t.answer(nil, strValue(rec, "conversationId"), "")
	})
	return err
}

// UpcomingSchedules lists every account's enabled schedules, soonest tick first: their ids,
// accounts, cron, time zones and next ticks, what a scheduler needs to claim one.
func (s *Store) UpcomingSchedules(ctx context.Context, limit int) ([]model.Schedule, error) {
	recs, err := statement(ctx, s, neo4j.AccessModeRead, "UpcomingSchedules", map[string]any{"limit": limit})
	if err != nil {
		return nil, err
	}
	out := make([]model.Schedule, 0, len(recs))
	for _, r := range recs {
		out = append(out, scheduleOf(nodeProps(r, "s")))
	}
	return out, nil
}

// ClaimTick claims a due tick of a schedule, once across every process sharing the graph.
func (s *Store) ClaimTick(ctx context.Context, in model.TickClaim) (model.Schedule, bool, error) {
	rec, err := single(ctx, s, neo4j.AccessModeWrite, "ClaimScheduleTick", map[string]any{
		"scheduleId": in.ScheduleID, "accountId": in.AccountID, "tickId": tickID(in.ScheduleID, in.At),
		"tickAt": in.At.UTC(), "nextRunAt": in.NextRunAt.UTC(), "now": s.Now().UTC(), "claimant": in.Claimant,
		"claim": newID("claim"), "pruneBefore": in.At.Add(-TickRetention).UTC(),
	})
	if err != nil || rec == nil {
		return model.Schedule{}, false, err
	}
	won, _ := value(rec, "won").(bool)
	return scheduleOf(nodeProps(rec, "s")), won, nil
}

// FinishTick records how a claimed tick's turn went.
func (s *Store) FinishTick(ctx context.Context, in model.TickClaim, res model.TickResult) error {
	var code, message any
	if res.Error != nil {
		code, message = res.Error.Code, res.Error.Message
	}
	_, err := statement(ctx, s, neo4j.AccessModeWrite, "FinishScheduleTick", map[string]any{
		"tickId": tickID(in.ScheduleID, in.At), "accountId": in.AccountID, "status": res.Status, "now": s.Now().UTC(),
		"runIds": orEmpty(res.RunIDs), "userMessageId": nullable(res.UserMessageID), "errorCode": code, "errorMessage": message,
	})
	return err
}

// tickID names a schedule's tick: the schedule and the tick's time, which is what makes a
// tick one node however many processes claim it.
func tickID(scheduleID string, at time.Time) string {
	return scheduleID + "@" + at.UTC().Format(time.RFC3339Nano)
}

func scheduleOf(p props) model.Schedule {
	sc := model.Schedule{
		ID: p.str("id"), ConversationID: p.str("conversationId"), BranchID: p.str("branchId"), ParticipantIDs: p.strs("participantIds"),
		Cron: p.str("cron"), Timezone: p.str("timezone"), Prompt: p.str("prompt"), PolicyVersion: p.str("policyVersion"),
		TokenBudget: int(p.i64("tokenBudget")), Tools: []model.ToolSpec{}, Enabled: p.boolean("enabled"), CreatedAt: p.time("createdAt"),
		NextRunAt: p.timePtr("nextRunAt"), LastRunAt: p.timePtr("lastRunAt"), LastStatus: p.str("lastStatus"), LastRunIDs: p.strs("lastRunIds"),
		AccountID: p.str("accountId"),
	}
	if raw := p.raw("tools"); raw != nil {
		_ = json.Unmarshal(raw, &sc.Tools)
	}
	if code := p.str("lastErrorCode"); code != "" {
		sc.LastError = &model.ProviderError{Code: code, Message: p.str("lastErrorMessage")}
	}
	return sc
}

func orNoTools(tools []model.ToolSpec) []model.ToolSpec {
	if tools == nil {
		return []model.ToolSpec{}
	}
	return tools
}

// nullableInt turns zero into a Cypher null, so that unset numbers are not stored.
func nullableInt(n int) any {
	if n == 0 {
		return nil
	}
	return n
}
