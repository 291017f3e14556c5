import { AGENT_ROLES } from '@switchyard/contracts';
import { extractAgent } from '../doc-review/extract.agent';
import { synthesizeAgent } from '../doc-review/synthesize.agent';
import type { AgentDefinition } from './agent-definition';
import { agentRegistry } from './agent-registry';

describe('agentRegistry', () => {
  it('maps every role to its agent by default', () => {
    const registry = agentRegistry();
    expect([...registry.keys()].sort()).toEqual([...AGENT_ROLES].sort());
    expect(registry.get('extract')).toBe(extractAgent);
    expect(registry.get('synthesize')).toBe(synthesizeAgent);
  });

  it('gives every built-in agent at least two steps (SPEC §4: two checkpointed steps per task)', () => {
    for (const agent of agentRegistry().values()) expect(agent.steps.length).toBeGreaterThanOrEqual(2);
  });

  it('refuses two definitions for one role', () => {
    const duplicate: AgentDefinition = { ...extractAgent };
    expect(() => agentRegistry([extractAgent, synthesizeAgent, duplicate])).toThrow('two agent definitions for role "extract"');
  });

  it('refuses a registry with a role missing', () => {
    expect(() => agentRegistry([extractAgent])).toThrow('no agent definition for role(s): synthesize');
    expect(() => agentRegistry([])).toThrow('no agent definition for role(s): extract, synthesize');
  });

  it('refuses an agent without steps', () => {
    const empty = { role: 'synthesize', steps: [] } as unknown as AgentDefinition;
    expect(() => agentRegistry([extractAgent, empty])).toThrow('agent "synthesize" has no steps');
  });
});
