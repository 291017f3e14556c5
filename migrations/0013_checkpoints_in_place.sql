-- Room on each page of the task table for the next version of its rows (new pages only;
-- existing pages fill as before). A checkpoint (current_step, step_checkpoints, route_targets,
-- cost_usd) changes no indexed column, so Postgres can write its new row version beside the old
-- one on the same page and add no entry to any index (a heap-only, HOT, update) — but only when
-- the page has room. The heartbeat and status changes move indexed columns (`updated_at`,
-- `status`) and still write every index (docs/BENCHMARKS.md, bench 1, session 7).
ALTER TABLE agent_task_state SET (fillfactor = 80);
