import { AGENT_ROLES, type AgentRole } from '@switchyard/contracts';
import { extractAgent } from '../doc-review/extract.agent';
import { synthesizeAgent } from '../doc-review/synthesize.agent';
import type { AgentDefinition } from './agent-definition';

const AGENTS: readonly AgentDefinition[] = [extractAgent, synthesizeAgent];

/**
 * Every role has exactly one agent definition. Checked when a worker boots so a missing or
 * duplicated handler stops it at once instead of failing jobs later.
 */
export function agentRegistry(agents: readonly AgentDefinition[] = AGENTS): ReadonlyMap<AgentRole, AgentDefinition> {
  const byRole = new Map<AgentRole, AgentDefinition>();
  for (const agent of agents) {
    if (byRole.has(agent.role)) throw new Error(`two agent definitions for role "${agent.role}"`);
    if (agent.steps.length < 1) throw new Error(`agent "${agent.role}" has no steps`);
    byRole.set(agent.role, agent);
  }
  const missing = AGENT_ROLES.filter((role) => !byRole.has(role));
  if (missing.length) throw new Error(`no agent definition for role(s): ${missing.join(', ')}`);
  return byRole;
}

/** role → the roles it waits for, as the task claim and the sweeper's reconcile read it. */
export function roleDependencies(agents: ReadonlyMap<AgentRole, AgentDefinition>): Record<string, readonly string[]> {
  const deps: Record<string, readonly string[]> = {};
  for (const [role, agent] of agents) if (agent.after?.length) deps[role] = [...agent.after];
  return deps;
}
