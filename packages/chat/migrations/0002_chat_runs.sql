-- Run state of chat steps (issue 32): what a yielded step needs to resume on any host, who runs a
-- step and until when its lease holds, and at most one running step per workflow.

CREATE TABLE chat_runs (
  workflow_id text NOT NULL,
  step_id text NOT NULL,
  status text NOT NULL
    CHECK (status IN ('queued', 'running', 'yielded', 'completed', 'failed', 'cancelled')),
  request jsonb NOT NULL,
  checkpoint jsonb,
  response jsonb,
  reason text,
  owner text,
  lease_expires_at timestamptz,
  cancel_requested boolean NOT NULL DEFAULT false,
  pauses integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workflow_id, step_id)
);

-- The busy-workflow rule, held by the database whichever host claims.
CREATE UNIQUE INDEX chat_runs_one_running ON chat_runs (workflow_id) WHERE status = 'running';
CREATE INDEX chat_runs_leases ON chat_runs (lease_expires_at) WHERE status = 'running';
CREATE INDEX chat_runs_queued ON chat_runs (workflow_id, created_at, step_id) WHERE status = 'queued';
CREATE INDEX chat_runs_updated ON chat_runs (updated_at);
