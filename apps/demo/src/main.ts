import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import IORedis from 'ioredis';
import { loadConfig } from '@switchyard/config';
import { deleteKeysWithPrefix } from '@switchyard/platform';
import { migrateDatabase } from '@switchyard/state';
import { MissingDependencyError, checkPostgres, obtainRedis } from './infrastructure';
import { ManagedProcess, SIM_TARGETS, freePort, simPorts, simTargetsEnv, sleep, writeRouterConfigForSim } from '@switchyard/devkit';
import { makeStyle, progressBar, renderJob, type DemoJob } from './report';
import { SAMPLE_JOBS } from './sample-jobs';

/** Simulated model latency per target (7B, 32B, cloud), so progress is visible. */
const SIM_LATENCY_MS = [350, 700, 1_100];
const WORKERS = 2;
const JOB_TIMEOUT_MS = 120_000;

const out = (line = '') => process.stdout.write(`${line}\n`);

interface SimCall {
  target: string;
  headers: Record<string, string>;
}

async function main(): Promise<number> {
  const config = loadConfig();
  const tty = process.stdout.isTTY === true;
  const style = makeStyle(tty);
  const cleanups: (() => Promise<void>)[] = [];
  const processes: ManagedProcess[] = [];
  let interrupted = false;
  process.once('SIGINT', () => {
    interrupted = true;
  });

  try {
    out(style.bold('Switchyard demo: three doc_review jobs through the real supervisor, workers and router'));
    await checkPostgres(config.DATABASE_URL);
    const redis = await obtainRedis(config.REDIS_URL, out);
    cleanups.push(redis.stop);
    out(`• Postgres ${new URL(config.DATABASE_URL).host}, Redis ${new URL(redis.url).host}`);

    await migrateDatabase(config.DATABASE_URL);
    out(`• migrations applied to ${new URL(config.DATABASE_URL).pathname.slice(1)}`);

    const tempDir = mkdtempSync(join(tmpdir(), 'switchyard-demo-'));
    cleanups.push(async () => rmSync(tempDir, { recursive: true, force: true }));
    const { targets: targetPorts, control: controlPort } = await simPorts();
    const prefix = `{switchyard-demo-${randomBytes(3).toString('hex')}}`;
    cleanups.push(() => deleteKeys(redis.url, prefix));
    const env = {
      DATABASE_URL: config.DATABASE_URL,
      REDIS_URL: redis.url,
      QUEUE_PREFIX: prefix,
      ROUTER_CONFIG: writeRouterConfigForSim(tempDir, targetPorts),
      LOG_LEVEL: 'warn',
    };

    const sim = ManagedProcess.start('llm-sim', { LLM_SIM_TARGETS: simTargetsEnv(targetPorts, SIM_LATENCY_MS), LLM_SIM_CONTROL_PORT: String(controlPort), LOG_LEVEL: 'info' });
    processes.push(sim);
    await sim.waitForLine(/llm-sim listening/);
    out(`• llm-sim serving ${SIM_TARGETS.map((t, i) => `${t.name}:${targetPorts[i]}`).join(', ')}`);

    // Chosen once the sim listens, so it cannot be one of the sim's ports.
    const port = await freePort();
    const supervisor = ManagedProcess.start('supervisor', { ...env, PORT: String(port), LOG_LEVEL: 'info' });
    processes.push(supervisor);
    await supervisor.waitForLine(/supervisor listening/);
    out(`• supervisor on http://127.0.0.1:${port} (dev mode: tenant "dev")`);
    for (let i = 1; i <= WORKERS; i += 1) {
      const worker = ManagedProcess.start('worker', { ...env, LOG_LEVEL: 'info' }, `worker-${i}`);
      processes.push(worker);
      await worker.waitForLine(/worker consuming/);
    }
    out(`• ${WORKERS} workers consuming extract and synthesize`);
    out();

    const api = `http://127.0.0.1:${port}`;
    const submitted: { label: string; jobId: string }[] = [];
    for (const job of SAMPLE_JOBS) {
      const res = await fetch(`${api}/v1/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(job.body) });
      const body = (await res.json()) as { job_id?: string; error?: unknown };
      if (res.status !== 202 || !body.job_id) throw new Error(`submission of "${job.label}" failed: ${res.status} ${JSON.stringify(body)}`);
      submitted.push({ label: job.label, jobId: body.job_id });
      out(`submitted ${job.label.padEnd(28)} → ${body.job_id}`);
    }
    out();

    const finished = await followProgress(api, submitted, tty, () => interrupted);
    out();
    for (const { label, jobId } of submitted) {
      out(renderJob(label, finished.get(jobId)!, style));
      out();
    }

    const calls = ((await (await fetch(`http://127.0.0.1:${controlPort}/calls`)).json()) as { calls: SimCall[] }).calls;
    out(style.bold('Where the model calls went (as the simulator saw them):'));
    for (const target of SIM_TARGETS) out(`  ${target.name.padEnd(16)} ${calls.filter((c) => c.target === target.name).length} calls`);
    const sensitive = finished.get(submitted[2]!.jobId)!;
    const sensitiveTasks = new Set(sensitive.tasks.map((t) => t.task_id));
    const leaked = calls.filter((c) => sensitiveTasks.has(c.headers['x-switchyard-task'] ?? '') && c.target === 'cloud_main').length;
    out(`  sensitive job → cloud: ${leaked} calls ${leaked === 0 ? '(never left the local targets)' : style.status('failed')}`);

    const allSucceeded = submitted.every(({ jobId }) => finished.get(jobId)?.status === 'success');
    out();
    out(allSucceeded ? style.bold('All jobs succeeded.') : style.status('failed') + ' some jobs did not succeed (see above).');
    return allSucceeded && leaked === 0 ? 0 : 1;
  } catch (error) {
    if (error instanceof MissingDependencyError) {
      process.stderr.write(`\ndemo cannot run: ${error.message}\n`);
      return 2;
    }
    process.stderr.write(`\ndemo failed: ${error instanceof Error ? error.message : String(error)}\n`);
    for (const p of processes) process.stderr.write(`--- ${p.name}\n${p.tail(15)}\n`);
    return 1;
  } finally {
    await Promise.all(processes.reverse().map((p) => p.stop()));
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    out(style.dim('stopped the simulator, supervisor and workers; removed the demo queues'));
  }
}

/** Polls the jobs until all are finished: a redrawn bar per job on a TTY, a line per change otherwise. */
async function followProgress(api: string, jobs: { label: string; jobId: string }[], tty: boolean, interrupted: () => boolean): Promise<Map<string, DemoJob>> {
  const latest = new Map<string, DemoJob>();
  const lastLine = new Map<string, string>();
  const deadline = Date.now() + JOB_TIMEOUT_MS;
  let drawn = false;
  for (;;) {
    for (const { jobId } of jobs) latest.set(jobId, (await (await fetch(`${api}/v1/jobs/${jobId}`)).json()) as DemoJob);
    const lines = jobs.map(({ label, jobId }) => {
      const job = latest.get(jobId)!;
      return `${label.padEnd(28)} ${progressBar(job.progress.completed, job.progress.total)}  ${job.status}`;
    });
    if (tty) {
      if (drawn) process.stdout.write(`\x1b[${lines.length}A`);
      for (const line of lines) process.stdout.write(`\x1b[2K${line}\n`);
      drawn = true;
    } else {
      jobs.forEach(({ jobId }, i) => {
        if (lastLine.get(jobId) !== lines[i]) out(lines[i]);
        lastLine.set(jobId, lines[i]!);
      });
    }
    const done = [...latest.values()].every((j) => ['success', 'failed', 'cancelled'].includes(j.status));
    if (done) return latest;
    if (interrupted()) throw new Error('interrupted');
    if (Date.now() > deadline) throw new Error(`jobs did not finish within ${JOB_TIMEOUT_MS / 1000} s`);
    await sleep(250);
  }
}

async function deleteKeys(url: string, prefix: string): Promise<void> {
  const redis = new IORedis(url, { maxRetriesPerRequest: 1 });
  try {
    await deleteKeysWithPrefix(redis, prefix);
  } finally {
    redis.disconnect();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`demo crashed: ${String(error)}\n`);
    process.exit(1);
  },
);
