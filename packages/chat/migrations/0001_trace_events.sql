-- Trace history shared by every agent host (DATABASE_URL set): the events of each step, and the
-- steps and workflows by their last write, which is what the workflow list and retention read.

CREATE TABLE chat_trace_events (
  workflow_id text NOT NULL,
  step_id text NOT NULL,
  -- Insertion order; events of one workflow are also ordered by their per-workflow seq.
  id bigint GENERATED ALWAYS AS IDENTITY,
  seq bigint,
  -- The event's JSON as streamed, kept as text: history returns it as written.
  line text NOT NULL,
  PRIMARY KEY (workflow_id, step_id, id)
);

CREATE TABLE chat_trace_steps (
  workflow_id text NOT NULL,
  step_id text NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (workflow_id, step_id)
);
CREATE INDEX chat_trace_steps_updated ON chat_trace_steps (updated_at);

CREATE TABLE chat_trace_workflows (
  workflow_id text PRIMARY KEY,
  updated_at timestamptz NOT NULL
);
CREATE INDEX chat_trace_workflows_updated ON chat_trace_workflows (updated_at DESC, workflow_id DESC);
