import { request } from 'node:http';
import { performance } from 'node:perf_hooks';
import OpenAI from 'openai';
import type { SimConfig, TargetConfig } from '../src/sim-config';
import { createSimulator, type Simulator, type SimulatorAddress } from '../src/simulator';

export const LOCAL = { name: 'local_vllm_7b', model: 'qwen2.5-7b-instruct' } as const;
export const CLOUD = { name: 'cloud_main', model: 'gpt-4.1' } as const;

export interface RunningSim {
  sim: Simulator;
  address: SimulatorAddress;
  portOf(target: string): number;
  client(target: string, options?: { timeout?: number; headers?: Record<string, string> }): OpenAI;
  control(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }>;
  setMode(target: string, change: Record<string, unknown>): Promise<void>;
}

/** In-process simulator on ephemeral ports, silent logs. */
export async function startSim(targets: Partial<TargetConfig>[] = [LOCAL, CLOUD]): Promise<RunningSim> {
  const config: SimConfig = {
    host: '127.0.0.1',
    controlPort: 0,
    logLevel: 'silent',
    targets: targets.map((target, index) => ({ name: `t${index}`, model: `m${index}`, port: 0, latencyMs: 0, ...target })),
  };
  const sim = createSimulator(config);
  const address = await sim.start();
  const portOf = (target: string) => {
    const found = address.targets.find((candidate) => candidate.name === target);
    if (!found) throw new Error(`no target ${target}`);
    return found.port;
  };
  const control = async (method: string, path: string, body?: unknown) => {
    const init: RequestInit = { method };
    if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
    const res = await fetch(`http://127.0.0.1:${address.controlPort}${path}`, init);
    return { status: res.status, json: (await res.json()) as unknown };
  };
  return {
    sim,
    address,
    portOf,
    control,
    client: (target, options = {}) =>
      new OpenAI({
        baseURL: `http://127.0.0.1:${portOf(target)}/v1`,
        apiKey: 'x',
        maxRetries: 0,
        ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
        ...(options.headers === undefined ? {} : { defaultHeaders: options.headers }),
      }),
    setMode: async (target, change) => {
      const res = await control('PUT', `/targets/${target}/mode`, change);
      if (res.status !== 200) throw new Error(`setMode ${target} failed: ${res.status} ${JSON.stringify(res.json)}`);
    },
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  firstByteMs: number;
}

/** Plain node:http, no keep-alive, so tests can time the first byte and see refused connections. */
export function rawRequest(port: number, method: string, path: string, body?: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request({ host: '127.0.0.1', port, method, path, agent: false, headers: body === undefined ? {} : { 'content-type': 'application/json' } }, (res) => {
      const firstByteMs = performance.now() - started;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), firstByteMs }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export function chatBody(model: string, userText: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ model, messages: [{ role: 'user', content: userText }], ...extra });
}
