import { ManagedProcess, SIM_TARGETS, simPorts, simTargetsEnv, writeRouterConfigForSim } from '@switchyard/devkit';

/**
 * llm-sim on free ports and the shipped router config pointed at it. `connectMs` replaces the
 * config's `timeouts.connect_ms` (the sim's slow mode holds the response headers back).
 */
export async function startSim(
  dir: string,
  connectMs?: number,
): Promise<{ process: ManagedProcess; control: string; routerConfig: string; ports: Record<string, number> }> {
  const { targets: ports, control: controlPort } = await simPorts();
  const sim = ManagedProcess.start('llm-sim', { LLM_SIM_TARGETS: simTargetsEnv(ports), LLM_SIM_CONTROL_PORT: String(controlPort) });
  await sim.waitForLine(/llm-sim listening/, 30_000);
  const routerConfig = writeRouterConfigForSim(dir, ports, (yaml) =>
    connectMs === undefined ? yaml : yaml.replace(/connect_ms: \d+/, `connect_ms: ${connectMs}`),
  );
  const byName = Object.fromEntries(SIM_TARGETS.map((t, i) => [t.name, ports[i]!]));
  return { process: sim, control: `http://127.0.0.1:${controlPort}`, routerConfig, ports: byName };
}

export async function setSimMode(control: string, target: string, change: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${control}/targets/${target}/mode`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(change) });
  if (res.status !== 200) throw new Error(`sim mode change failed: ${res.status} ${await res.text()}`);
}
