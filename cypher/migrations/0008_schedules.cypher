// Schedules (DESIGN §6 "Modes"). A schedule's id and a tick's are unique: the tick's
// uniqueness is what claims each due tick once across server processes. The soonest ticks
// come first for every scheduler, a schedule's ticks are found by time for pruning, and both
// by conversation for its deletion.
CREATE CONSTRAINT schedule_id IF NOT EXISTS FOR (n:Schedule) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT schedule_tick_id IF NOT EXISTS FOR (n:ScheduleTick) REQUIRE n.id IS UNIQUE;
CREATE INDEX schedule_next_run IF NOT EXISTS FOR (n:Schedule) ON (n.nextRunAt);
CREATE INDEX schedule_conversation IF NOT EXISTS FOR (n:Schedule) ON (n.conversationId);
CREATE INDEX schedule_tick_schedule_time IF NOT EXISTS FOR (n:ScheduleTick) ON (n.scheduleId, n.tickAt);
CREATE INDEX schedule_tick_conversation IF NOT EXISTS FOR (n:ScheduleTick) ON (n.conversationId);
