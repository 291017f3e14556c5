-- A running task's sign of life (its checkpoints and its worker's heartbeats) goes to a column of
-- its own that no index names, so those writes are heap-only (HOT) updates: Postgres writes the
-- new row version beside the old one on the same page and adds no entry to any of the table's
-- indexes. Before, every checkpoint and heartbeat moved `updated_at`, which five indexes name,
-- and wrote a new entry into the primary key, the parent, job, status and running indexes, each
-- a dead entry that later index scans walk until a vacuum. A task of a long model call
-- heartbeats every HEARTBEAT_MS; a task of several steps checkpoints each (docs/BENCHMARKS.md,
-- bench 1, session 7, for what it measured).
--
-- `updated_at` now moves when a task's status or lease changes; the time a running task last
-- showed life is greatest(updated_at, heartbeat_at) (a claim writes both). A running task is
-- stale when that time is older than the lease; since it is never older than `updated_at`, the
-- running index on `updated_at` still bounds the sweeper's scan, and the staleness is checked
-- on the row (task-clauses.ts, staleRunningTask).
ALTER TABLE agent_task_state ADD COLUMN IF NOT EXISTS heartbeat_at timestamp (3) with time zone;
--> statement-breakpoint
-- Room on each page for the next version of its rows: a HOT update needs it on the same page
-- (new pages only; existing pages fill as before).
ALTER TABLE agent_task_state SET (fillfactor = 80);
