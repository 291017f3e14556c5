import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { loadConfig } from '@switchyard/config';
import { ManagedProcess, freePort, sleep } from '@switchyard/devkit';
import { setSimMode, startSim } from './crash-resume/processes';
import { Cleanup, REDIS_URL, benchPrefix, createBenchDatabase, deleteKeys } from './support/resources';
import { fixed, heading, median, percentile, table, verdict } from './support/report';

/**
 * Crash to resume: a worker is killed (SIGKILL) while its tasks are inside a model call; the
 * time from the kill to each such task's next checkpoint, written by the worker that took it
 * over. Real processes (supervisor with its sweeper, workers, llm-sim) at the DEFAULT liveness
 * settings. A control round first holds model calls longer than STALE_AFTER_MS on a living
 * worker: no task may be taken over there (no false takeovers of slow but living workers).
 */

export const CRASH_RESUME_TARGET_MEDIAN_S = 10;

export interface CrashResumeSummary {
  pass: boolean;
  samplesS: number[];
  falseTakeovers: number;
}

interface TaskRow {
  task_id: string;
  status: string;
  current_step: number;
  retry_count: number;
  lease_owner: string | null;
  step_checkpoints: { step: number; completed_at: string }[];
}

const KILLS = Number(process.env.BENCH_CRASH_KILLS ?? 6);
const SIM_TARGET_NAMES = ['local_vllm_7b', 'local_vllm_32b', 'cloud_main'] as const;

export async function runCrashResumeBench(): Promise<CrashResumeSummary> {
  const defaults = loadConfig({});
  heading('crash to resume (kill -9 → next checkpoint)');
  console.log(
    `defaults: HEARTBEAT_MS ${defaults.HEARTBEAT_MS}, STALE_AFTER_MS ${defaults.STALE_AFTER_MS}, SWEEP_INTERVAL_MS ${defaults.SWEEP_INTERVAL_MS}; ${KILLS} kills; real supervisor, workers and llm-sim processes`,
  );
  const cleanup = new Cleanup();
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-crash-'));
  cleanup.add('temp dir', async () => rmSync(dir, { recursive: true, force: true }));
  try {
    const dbUrl = await createBenchDatabase(cleanup);
    const pool = new Pool({ connectionString: dbUrl, max: 2 });
    cleanup.add('pool', () => pool.end());
    const prefix = benchPrefix();
    cleanup.add('queue keys', async () => void (await deleteKeys(`${prefix}:`)));
    // The sim's slow mode holds the response headers back: let the router wait for them up to
    // 14 s (shipped: 3 s), so one model call can outlast the stale threshold in the control.
    const sim = await startSim(dir, 14_000);
    cleanup.add('llm-sim', () => sim.process.stop());
    const env = { DATABASE_URL: dbUrl, REDIS_URL, QUEUE_PREFIX: prefix, ROUTER_CONFIG: sim.routerConfig, LOG_LEVEL: 'warn' };
    const port = await freePort();
    const supervisor = ManagedProcess.start('supervisor', { ...env, PORT: String(port), LOG_LEVEL: 'info' });
    cleanup.add('supervisor', () => supervisor.stop());
    await supervisor.waitForLine(/supervisor listening/);

    const workers: ManagedProcess[] = [];
    let started = 0;
    const startWorker = async () => {
      started += 1;
      const worker = ManagedProcess.start('worker', { ...env, WORKER_ID: `bench-w${started}`, LOG_LEVEL: 'info' }, `worker-${started}`);
      cleanup.add(worker.name, () => worker.stop());
      await worker.waitForLine(/worker consuming/);
      workers.push(worker);
      return worker;
    };
    await startWorker();
    await startWorker();

    const submit = async (docs: number): Promise<string> => {
      const res = await fetch(`http://127.0.0.1:${port}/v1/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          type: 'doc_review',
          input: {
            question: 'When is payment due?',
            documents: Array.from({ length: docs }, (_, i) => ({ id: `d${i + 1}`, text: `Payment is due within ${30 + i} days.\n\nLate payment accrues interest.` })),
          },
        }),
      });
      if (res.status !== 202) throw new Error(`submit failed: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { job_id: string }).job_id;
    };
    const rows = async (jobId: string) =>
      (
        await pool.query<TaskRow>(
          'select task_id, status, current_step, retry_count, lease_owner, step_checkpoints from agent_task_state where job_id = $1 and parent_task_id is not null',
          [jobId],
        )
      ).rows;
    const jobDone = async (jobId: string, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const { rows: r } = await pool.query<{ status: string }>('select status from agent_task_state where task_id = $1', [jobId]);
        if (r[0] && ['success', 'failed', 'cancelled'].includes(r[0].status)) return r[0].status;
        await sleep(100);
      }
      throw new Error(`job ${jobId} did not finish within ${timeoutMs} ms`);
    };

    // Every target alike: a slow local target counts as overloaded and work spills to the others.
    const slowAll = async (delayMs: number) => {
      for (const target of SIM_TARGET_NAMES) await setSimMode(sim.control, target, delayMs > 0 ? { mode: 'slow', delay_ms: delayMs } : { mode: 'ok' });
    };
    // Control: model calls longer than STALE_AFTER_MS on living workers; nothing may be taken
    // over (a worker heartbeats on its own timer while it waits for the model).
    await slowAll(defaults.STALE_AFTER_MS + 2 * defaults.HEARTBEAT_MS);
    const control = await submit(4);
    console.log(`control round: 4 extracts on living workers, model calls slowed to outlast STALE_AFTER_MS ...`);
    const takeoversBefore = supervisor.count(/stale task taken over/);
    await jobDone(control, 120_000);
    const falseTakeovers = supervisor.count(/stale task taken over/) - takeoversBefore;
    const calls = (
      await pool.query<{ outcome: string; latency_ms: number }>(
        `select r->>'outcome' as outcome, (r->>'latency_ms')::int as latency_ms from agent_task_state, jsonb_array_elements(route_targets) r where job_id = $1 and role = 'extract'`,
        [control],
      )
    ).rows;
    const longest = Math.max(...calls.map((c) => c.latency_ms));
    console.log(
      `control round: ${falseTakeovers} task(s) taken over (want 0); ${calls.length} model calls (${calls.filter((c) => c.outcome === 'ok').length} ok), longest ${fixed(longest / 1000, 1)} s vs stale threshold ${defaults.STALE_AFTER_MS / 1000} s`,
    );
    const controlValid = calls.some((c) => c.outcome === 'ok' && c.latency_ms > defaults.STALE_AFTER_MS);

    const samplesS: number[] = [];
    for (let round = 1; round <= KILLS; round += 1) {
      // Slow enough that the kill lands mid-call; the other worker's calls end soon after.
      await slowAll(2_500);
      const jobId = await submit(4);
      // Wait until a worker is inside the model step of some task, then kill that worker.
      let victimTasks: TaskRow[] = [];
      let victim: ManagedProcess | undefined;
      const deadline = Date.now() + 30_000;
      while (!victim && Date.now() < deadline) {
        const mid = (await rows(jobId)).filter((r) => r.status === 'running' && r.current_step === 1);
        const owner = mid[0]?.lease_owner;
        victim = workers.find((w) => w.running && owner === `bench-w${w.name.split('-')[1]}`);
        if (victim) victimTasks = mid.filter((r) => r.lease_owner === owner);
        else await sleep(50);
      }
      if (!victim) throw new Error(`round ${round}: no worker got into a model step`);
      // Let the victim's heartbeat land at a random phase relative to the kill.
      await sleep(Math.random() * defaults.HEARTBEAT_MS);
      victim.kill('SIGKILL');
      await victim.waitForExit();
      const killedAt = Date.now();
      workers.splice(workers.indexOf(victim), 1);
      // The resumed step should finish at once: what is measured is detection and hand-over.
      await slowAll(0);
      await startWorker();
      await jobDone(jobId, 120_000);
      const after = await rows(jobId);
      for (const task of victimTasks) {
        const row = after.find((r) => r.task_id === task.task_id)!;
        const next = row.step_checkpoints.find((c) => c.step === task.current_step);
        if (!next || row.retry_count < 1) throw new Error(`round ${round}: task ${task.task_id} was not resumed (${JSON.stringify(row)})`);
        samplesS.push((Date.parse(next.completed_at) - killedAt) / 1000);
      }
      console.log(`round ${round}: killed ${victim.name} holding ${victimTasks.length} task(s) mid-step; resumed after ${samplesS.slice(-victimTasks.length).map((s) => `${s.toFixed(1)} s`).join(', ')}`);
    }

    const med = median(samplesS);
    const pass = med <= CRASH_RESUME_TARGET_MEDIAN_S && falseTakeovers === 0 && controlValid;
    if (!controlValid) console.log('control round invalid: no successful model call outlasted the stale threshold');
    console.log(
      `\n${table(
        ['samples', 'min s', 'median s', 'p90 s', 'max s', 'false takeovers', `target: median ≤ ${CRASH_RESUME_TARGET_MEDIAN_S} s, 0 false`],
        [[String(samplesS.length), fixed(Math.min(...samplesS), 1), fixed(med, 1), fixed(percentile(samplesS, 90), 1), fixed(Math.max(...samplesS), 1), String(falseTakeovers), verdict(pass)]],
      )}`,
    );
    return { pass, samplesS, falseTakeovers };
  } finally {
    await cleanup.runAll();
  }
}
