import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { resolve } from 'node:path';

/** From libs/devkit/src (tests) and libs/devkit/dist (demo, benches) alike. */
export const REPO_ROOT = resolve(__dirname, '../../..');

export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port!;
}

/**
 * `count` different free ports. Each is held open until all are chosen: ports taken one after
 * another, each released before the next is asked for, may come back twice (the test stack's
 * sim once got its control port equal to a target's).
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i += 1) {
      const server = createServer();
      servers.push(server);
      ports.push(
        await new Promise<number>((resolvePort, reject) => {
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => {
            const address = server.address();
            resolvePort(typeof address === 'object' && address ? address.port : 0);
          });
        }),
      );
    }
    return ports;
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((closed) => server.close(() => closed()))));
  }
}

/** A built Switchyard process (apps/<name>/dist/main.js) with its output kept for assertions. */
export class ManagedProcess {
  readonly output: string[] = [];
  private readonly exited: Promise<number | null>;
  private exitCode: number | null | undefined;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    // A chunk may end mid-line: keep the tail until its newline arrives (per stream).
    const collector = () => {
      let partial = '';
      return {
        data: (chunk: Buffer) => {
          const lines = (partial + chunk.toString('utf8')).split('\n');
          partial = lines.pop() ?? '';
          for (const line of lines) if (line.trim()) this.output.push(line);
        },
        end: () => {
          if (partial.trim()) this.output.push(partial);
          partial = '';
        },
      };
    };
    for (const stream of [child.stdout, child.stderr]) {
      const { data, end } = collector();
      stream?.on('data', data);
      stream?.on('end', end);
    }
    this.exited = new Promise((resolveExit) =>
      child.once('exit', (code) => {
        this.exitCode = code;
        resolveExit(code);
      }),
    );
  }

  /**
   * A built app, with only the environment given (plus PATH): nothing leaks in from the caller's shell.
   * `nodeArgs` go before the script (e.g. `--cpu-prof`, which NODE_OPTIONS may not carry).
   */
  static start(app: string, env: Record<string, string>, name = app, nodeArgs: readonly string[] = []): ManagedProcess {
    const child = spawn(process.execPath, [...nodeArgs, resolve(REPO_ROOT, `apps/${app}/dist/main.js`)], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new ManagedProcess(name, child);
  }

  static spawnCommand(command: string, args: string[], name = command): ManagedProcess {
    return new ManagedProcess(name, spawn(command, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] }));
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  /** Resolves when a log line matches; rejects if the process exits or the time runs out. */
  async waitForLine(pattern: RegExp, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let seen = 0;
    while (Date.now() < deadline) {
      for (; seen < this.output.length; seen += 1) {
        const line = this.output[seen]!;
        if (pattern.test(line)) return line;
      }
      if (!this.running) throw new Error(`${this.name} exited (${this.exitCode}) before logging ${pattern}:\n${this.tail()}`);
      await sleep(25);
    }
    throw new Error(`${this.name} did not log ${pattern} within ${timeoutMs} ms:\n${this.tail()}`);
  }

  async waitForExit(timeoutMs = 10_000): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${this.name} did not exit within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** SIGTERM, then SIGKILL if it does not exit in time. */
  async stop(timeoutMs = 10_000): Promise<number | null> {
    if (!this.running) return this.exitCode ?? null;
    this.child.kill('SIGTERM');
    try {
      return await this.waitForExit(timeoutMs);
    } catch {
      this.child.kill('SIGKILL');
      return this.exited;
    }
  }

  /** Output lines matching `pattern` so far. */
  count(pattern: RegExp): number {
    return this.output.filter((line) => pattern.test(line)).length;
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    this.child.kill(signal);
  }

  tail(lines = 30): string {
    return this.output.slice(-lines).join('\n');
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `check` until it returns a value (not undefined) or the time runs out. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await sleep(everyMs);
  }
  throw new Error(`timed out waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ''}`);
}
