import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { REPO_ROOT, freePorts } from './processes';

/** The targets of the shipped config/router.yaml, as llm-sim serves them. */
export const SIM_TARGETS = [
  { name: 'local_vllm_7b', model: 'qwen2.5-7b-instruct', shippedPort: 18101 },
  { name: 'local_vllm_32b', model: 'qwen2.5-32b-instruct', shippedPort: 18102 },
  { name: 'cloud_main', model: 'gpt-4.1', shippedPort: 18103 },
] as const;

/** Ports for an llm-sim: one per target (in `SIM_TARGETS` order) and its control port, all different. */
export async function simPorts(): Promise<{ targets: number[]; control: number }> {
  const [control, ...targets] = await freePorts(SIM_TARGETS.length + 1);
  return { targets, control: control! };
}

/** `LLM_SIM_TARGETS` for these ports, with an optional base latency per target. */
export function simTargetsEnv(ports: readonly number[], latencyMs: readonly number[] = []): string {
  return SIM_TARGETS.map((t, i) => `${t.name}:${ports[i]}:${t.model}${latencyMs[i] ? `:${latencyMs[i]}` : ''}`).join(',');
}

/**
 * The shipped config/router.yaml — its rules unchanged — with the endpoints moved to a sim
 * on other ports (and `edit`ed, e.g. a timeout changed), written into `dir` beside a copy of
 * the canary cases it names (`canaries.cases_file` is relative to it). Returns the file's path.
 */
export function writeRouterConfigForSim(dir: string, ports: readonly number[], edit: (yaml: string) => string = (yaml) => yaml): string {
  let yaml = readFileSync(resolve(REPO_ROOT, 'config/router.yaml'), 'utf8');
  SIM_TARGETS.forEach((t, i) => {
    yaml = yaml.replaceAll(`127.0.0.1:${t.shippedPort}/`, `127.0.0.1:${ports[i]}/`);
  });
  // The copy lives elsewhere: the files the config names relative to itself stay in the repo.
  yaml = yaml.replace(/^(\s*examples:\s*)(classifier\/\S+)$/mu, (_, key: string, path: string) => `${key}${resolve(REPO_ROOT, 'config', path)}`);
  const file = join(dir, 'router.yaml');
  copyFileSync(resolve(REPO_ROOT, 'config/canaries.yaml'), join(dir, 'canaries.yaml'));
  writeFileSync(file, edit(yaml));
  return file;
}
