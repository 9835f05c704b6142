-- Approvals audited (issue 32): every approve or deny that took effect on a yielded step, with
-- who gave it and when, kept beside the run; and the index of the list of waiting steps.

ALTER TABLE chat_runs ADD COLUMN decisions jsonb NOT NULL DEFAULT '[]'::jsonb;

CREATE INDEX chat_runs_yielded ON chat_runs (updated_at) WHERE status = 'yielded';
