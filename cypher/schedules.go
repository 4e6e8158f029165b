package cypher

import (
	"context"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/ctxgraph/ctxgraph/model"
)

// TickRetention is how long a schedule's fired ticks are kept (with their STARTED edges to
// the runs they started): a claim prunes its schedule's older ticks a few at a time. A tick
// behind its schedule's nextRunAt can never be claimed again, so pruning it loses only
// history that the runs keep anyway.
const TickRetention = 24 * time.Hour

// The statements of schedules.
var (
	createSchedule        = newQuery[createScheduleParams, scheduleRow]("CreateSchedule")
	conversationSchedules = newQuery[conversationSchedulesParams, struct {
		ID        string `col:"id"`
		Schedules []any  `col:"schedules"`
	}]("ConversationSchedules")
	readSchedule       = newQuery[idParams, scheduleRow]("ReadSchedule")
	deleteSchedule     = newQuery[idParams, conversationIDRow]("DeleteSchedule")
	upcomingSchedules  = newQuery[upcomingParams, scheduleRow]("UpcomingSchedules")
	claimScheduleTick  = newQuery[claimTickParams, claimTickRow]("ClaimScheduleTick")
	finishScheduleTick = newQuery[finishTickParams, idRow]("FinishScheduleTick")
)

type createScheduleParams struct {
	ID             string     `param:"id"`
	AccountID      string     `param:"accountId"`
	ConversationID string     `param:"conversationId"`
	BranchID       string     `param:"branchId"`
	ParticipantIDs []string   `param:"participantIds"`
	Cron           string     `param:"cron"`
	Timezone       string     `param:"timezone"`
	Prompt         string     `param:"prompt"`
	PolicyVersion  string     `param:"policyVersion,null"`
	TokenBudget    int        `param:"tokenBudget,null"`
	Tools          string     `param:"tools,null"`
	Enabled        bool       `param:"enabled"`
	NextRunAt      *time.Time `param:"nextRunAt"`
	CreatedAt      time.Time  `param:"createdAt"`
	RecordedAt     time.Time  `param:"recordedAt"`
}

type scheduleRow struct {
	S props `col:"s"`
}

type conversationSchedulesParams struct {
	ConversationID string `param:"conversationId"`
	AccountID      string `param:"accountId"`
}

type upcomingParams struct {
	Limit int `param:"limit"`
}

type claimTickParams struct {
	ScheduleID  string    `param:"scheduleId"`
	AccountID   string    `param:"accountId"`
	TickID      string    `param:"tickId"`
	TickAt      time.Time `param:"tickAt"`
	NextRunAt   time.Time `param:"nextRunAt"`
	Now         time.Time `param:"now"`
	Claimant    string    `param:"claimant"`
	Claim       string    `param:"claim"`
	PruneBefore time.Time `param:"pruneBefore"`
}

type claimTickRow struct {
	S   props `col:"s"`
	Won bool  `col:"won"`
}

type finishTickParams struct {
	TickID        string    `param:"tickId"`
	AccountID     string    `param:"accountId"`
	Status        string    `param:"status"`
	Now           time.Time `param:"now"`
	RunIDs        []string  `param:"runIds"`
	UserMessageID string    `param:"userMessageId,null"`
	ErrorCode     *string   `param:"errorCode"`
	ErrorMessage  *string   `param:"errorMessage"`
}

// CreateSchedule writes a schedule on a branch of its conversation.
func (s *Store) CreateSchedule(ctx context.Context, accountID string, in model.NewSchedule) (model.Schedule, error) {
	createdAt, recordedAt := s.stamps(in.At)
	tools, err := toolsText(in.Tools)
	if err != nil {
		return model.Schedule{}, err
	}
	return writeTx(ctx, s, func(t *tx) (model.Schedule, error) {
		row, found, err := createSchedule.one(t, createScheduleParams{
			ID: newID("sch"), AccountID: accountID, ConversationID: in.ConversationID, BranchID: in.BranchID,
			ParticipantIDs: orEmpty(in.ParticipantIDs), Cron: in.Cron, Timezone: in.Timezone, Prompt: in.Prompt,
			PolicyVersion: in.PolicyVersion, TokenBudget: in.TokenBudget, Tools: tools,
			Enabled: in.Enabled, NextRunAt: in.NextRunAt, CreatedAt: createdAt, RecordedAt: recordedAt,
		})
		if err != nil {
			return model.Schedule{}, err
		}
		if !found {
			return model.Schedule{}, model.NotFound("conversation", in.ConversationID)
		}
		sc := scheduleOf(row.S)
		return sc, t.answer(sc, sc.ConversationID, "")
	})
}

// Schedules lists a conversation's schedules, oldest first.
func (s *Store) Schedules(ctx context.Context, accountID, conversationID string) ([]model.Schedule, error) {
	row, found, err := conversationSchedules.autoOne(ctx, s, neo4j.AccessModeRead, conversationSchedulesParams{ConversationID: conversationID, AccountID: accountID})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, model.NotFound("conversation", conversationID)
	}
	out := []model.Schedule{}
	for _, v := range row.Schedules {
		out = append(out, scheduleOf(asProps(v)))
	}
	return out, nil
}

// Schedule reads one schedule.
func (s *Store) Schedule(ctx context.Context, accountID, id string) (model.Schedule, error) {
	row, found, err := readSchedule.autoOne(ctx, s, neo4j.AccessModeRead, idParams{ID: id, AccountID: accountID})
	if err != nil {
		return model.Schedule{}, err
	}
	if !found {
		return model.Schedule{}, model.NotFound("schedule", id)
	}
	return scheduleOf(row.S), nil
}

// DeleteSchedule deletes a schedule.
func (s *Store) DeleteSchedule(ctx context.Context, accountID, id string) error {
	_, err := writeTx(ctx, s, func(t *tx) (struct{}, error) {
		row, found, err := deleteSchedule.one(t, idParams{ID: id, AccountID: accountID})
		if err != nil {
			return struct{}{}, err
		}
		if !found {
			return struct{}{}, model.NotFound("schedule", id)
		}
		return struct{}{}, t.answer(nil, row.ConversationID, "")
	})
	return err
}

// UpcomingSchedules lists every account's enabled schedules, soonest tick first: their ids,
// accounts, cron, time zones and next ticks, what a scheduler needs to claim one.
func (s *Store) UpcomingSchedules(ctx context.Context, limit int) ([]model.Schedule, error) {
	rows, err := upcomingSchedules.autoAll(ctx, s, neo4j.AccessModeRead, upcomingParams{Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]model.Schedule, 0, len(rows))
	for _, r := range rows {
		out = append(out, scheduleOf(r.S))
	}
	return out, nil
}

// ClaimTick claims a due tick of a schedule, once across every process sharing the graph.
func (s *Store) ClaimTick(ctx context.Context, in model.TickClaim) (model.Schedule, bool, error) {
	row, found, err := claimScheduleTick.autoOne(ctx, s, neo4j.AccessModeWrite, claimTickParams{
		ScheduleID: in.ScheduleID, AccountID: in.AccountID, TickID: tickID(in.ScheduleID, in.At),
		TickAt: in.At.UTC(), NextRunAt: in.NextRunAt.UTC(), Now: s.Now().UTC(), Claimant: in.Claimant,
		Claim: newID("claim"), PruneBefore: in.At.Add(-TickRetention).UTC(),
	})
	if err != nil || !found {
		return model.Schedule{}, false, err
	}
	return scheduleOf(row.S), row.Won, nil
}

// FinishTick records how a claimed tick's turn went.
func (s *Store) FinishTick(ctx context.Context, in model.TickClaim, res model.TickResult) error {
	params := finishTickParams{
		TickID: tickID(in.ScheduleID, in.At), AccountID: in.AccountID, Status: res.Status, Now: s.Now().UTC(),
		RunIDs: orEmpty(res.RunIDs), UserMessageID: res.UserMessageID,
	}
	if res.Error != nil {
		params.ErrorCode, params.ErrorMessage = &res.Error.Code, &res.Error.Message
	}
	_, err := finishScheduleTick.autoAll(ctx, s, neo4j.AccessModeWrite, params)
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
		TokenBudget: int(p.i64("tokenBudget")), Tools: orNoTools(p.tools("tools")), Enabled: p.boolean("enabled"), CreatedAt: p.time("createdAt"),
		NextRunAt: p.timePtr("nextRunAt"), LastRunAt: p.timePtr("lastRunAt"), LastStatus: p.str("lastStatus"), LastRunIDs: p.strs("lastRunIds"),
		AccountID: p.str("accountId"),
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
