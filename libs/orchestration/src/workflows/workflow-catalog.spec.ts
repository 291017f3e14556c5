import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@switchyard/observability';
import { WorkflowCatalog } from './workflow-catalog';

const workflow = (type: string, role: string, user = 'Say something about {{input.topic}}') => `
type: ${type}
input: {type: object, required: [topic], properties: {topic: {type: string}}}
agents:
  - role: ${role}
    prompt: {user: "${user}"}
`;

async function waitFor<T>(what: string, check: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('WorkflowCatalog', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'workflows-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('loads the valid files, leaves a bad one out naming file and path, and lists every role once', () => {
    writeFileSync(join(dir, 'a.yaml'), workflow('alpha', 'writer'));
    writeFileSync(join(dir, 'b.yaml'), workflow('beta', 'writer'));
    writeFileSync(join(dir, 'c.yaml'), workflow('gamma', 'critic', 'Judge {{outputs.nobody.x}}'));
    const logged: string[] = [];
    const logger = createLogger('catalog', 'silent');
    jest.spyOn(logger, 'error').mockImplementation(((_fields: unknown, message: string) => logged.push(message)) as never);
    const catalog = new WorkflowCatalog({ dir, logger });
    expect([...catalog.workflows.keys()].sort()).toEqual(['alpha', 'beta']);
    expect(catalog.roles()).toEqual(['writer']);
    expect(catalog.errors).toEqual([expect.objectContaining({ file: join(dir, 'c.yaml'), path: 'agents[0].prompt.user' })]);
    expect(logged).toEqual([expect.stringContaining(`${join(dir, 'c.yaml')}:`)]);
  });

  it('picks up a change without a restart; a file broken later keeps its previous version', async () => {
    writeFileSync(join(dir, 'a.yaml'), workflow('alpha', 'writer'));
    const catalog = new WorkflowCatalog({ dir, logger: createLogger('catalog', 'silent'), debounceMs: 20 });
    const changes: string[][] = [];
    catalog.onChange((workflows) => changes.push([...workflows.keys()].sort()));
    catalog.start();
    try {
      writeFileSync(join(dir, 'b.yaml'), workflow('beta', 'reviewer'));
      await waitFor('beta to load', () => (catalog.workflows.has('beta') ? true : undefined));
      expect(catalog.roles()).toEqual(['reviewer', 'writer']);
      expect(changes.at(-1)).toEqual(['alpha', 'beta']);

      const before = catalog.workflows.get('alpha');
      writeFileSync(join(dir, 'a.yaml'), 'type: alpha\nagents: nonsense\n');
      await waitFor('the rejection', () => (catalog.errors.length > 0 ? true : undefined));
      expect(catalog.workflows.get('alpha')).toBe(before);
      expect(catalog.errors[0]!.file).toBe(join(dir, 'a.yaml'));
    } finally {
      catalog.stop();
    }
  });
});
