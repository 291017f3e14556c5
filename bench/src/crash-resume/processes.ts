import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

/** bench/dist/crash-resume → the repository root. */
export const REPO_ROOT = resolve(__dirname, '../../..');

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A built app (apps/<app>/dist/main.js) with its output kept, as the e2e harness starts them. */
export class BenchProcess {
  private readonly output: string[] = [];
  private pending = '';
  private exitCode: number | null | undefined;
  private readonly exited: Promise<void>;

  private constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    const collect = (chunk: Buffer) => {
      const lines = (this.pending + chunk.toString('utf8')).split('\n');
      this.pending = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) this.output.push(line);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    this.exited = new Promise((r) => child.once('exit', (code) => ((this.exitCode = code), r())));
  }

  static start(app: string, env: Record<string, string>, name = app): BenchProcess {
    const child = spawn(process.execPath, [resolve(REPO_ROOT, `apps/${app}/dist/main.js`)], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new BenchProcess(name, child);
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  async waitForLine(pattern: RegExp, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.output.some((l) => pattern.test(l))) return;
      if (!this.running) throw new Error(`${this.name} exited (${this.exitCode}):\n${this.output.slice(-20).join('\n')}`);
      await sleep(25);
    }
    throw new Error(`${this.name} did not log ${pattern} within ${timeoutMs} ms:\n${this.output.slice(-20).join('\n')}`);
  }

  /** Output lines matching `pattern` so far. */
  count(pattern: RegExp): number {
    return this.output.filter((l) => pattern.test(l)).length;
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (!this.running) return;
    this.child.kill(signal);
    if (signal === 'SIGKILL') await this.exited;
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** The targets of the shipped config/router.yaml, as llm-sim serves them (apps/demo/src/sim-targets.ts). */
const SIM_TARGETS = [
  { name: 'local_vllm_7b', model: 'qwen2.5-7b-instruct', shippedPort: 18101 },
  { name: 'local_vllm_32b', model: 'qwen2.5-32b-instruct', shippedPort: 18102 },
  { name: 'cloud_main', model: 'gpt-4.1', shippedPort: 18103 },
] as const;

/**
 * llm-sim on free ports and the shipped router config pointed at it. `connectMs` replaces the
 * config's `timeouts.connect_ms` (the sim's slow mode holds the response headers back).
 */
export async function startSim(
  dir: string,
  connectMs?: number,
): Promise<{ process: BenchProcess; control: string; routerConfig: string; ports: Record<string, number> }> {
  const ports = await Promise.all(SIM_TARGETS.map(() => freePort()));
  const controlPort = await freePort();
  const sim = BenchProcess.start('llm-sim', {
    LLM_SIM_TARGETS: SIM_TARGETS.map((t, i) => `${t.name}:${ports[i]}:${t.model}`).join(','),
    LLM_SIM_CONTROL_PORT: String(controlPort),
  });
  await sim.waitForLine(/llm-sim listening/);
  let yaml = readFileSync(resolve(REPO_ROOT, 'config/router.yaml'), 'utf8');
  SIM_TARGETS.forEach((t, i) => {
    yaml = yaml.replaceAll(`127.0.0.1:${t.shippedPort}/`, `127.0.0.1:${ports[i]}/`);
  });
  if (connectMs !== undefined) yaml = yaml.replace(/connect_ms: \d+/, `connect_ms: ${connectMs}`);
  const routerConfig = join(dir, 'router.yaml');
  writeFileSync(routerConfig, yaml);
  const byName = Object.fromEntries(SIM_TARGETS.map((t, i) => [t.name, ports[i]!]));
  return { process: sim, control: `http://127.0.0.1:${controlPort}`, routerConfig, ports: byName };
}

export async function setSimMode(control: string, target: string, change: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${control}/targets/${target}/mode`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(change) });
  if (res.status !== 200) throw new Error(`sim mode change failed: ${res.status} ${await res.text()}`);
}
