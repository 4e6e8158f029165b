// A run's calls by callId: RequestToolCall checks that a run has no call with the new call's
// callId with one index seek, instead of reading every call the run has requested (a long
// agent run requests thousands).
CREATE INDEX tool_call_run_call IF NOT EXISTS FOR (n:ToolCall) ON (n.runId, n.callId);
