import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadWorkflowsDir, mergeReloadedWorkflows, parseWorkflowYaml } from './load-workflows';

const SHIPPED = join(__dirname, '../../../config/workflows');

const VALID = `type: echo
input: {type: object, required: [text], properties: {text: {type: string}}}
agents:
  - role: echo
    prompt: {user: "Say {{input.text}}"}
`;

describe('loadWorkflowsDir', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'workflows-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('loads every shipped workflow without errors', () => {
    const loaded = loadWorkflowsDir(SHIPPED);
    expect(loaded.errors).toEqual([]);
    expect([...loaded.workflows.keys()].sort()).toEqual(['doc_review', 'goal', 'incident_review', 'research_report']);
    for (const workflow of loaded.workflows.values()) expect(workflow.source).toBe(join(SHIPPED, `${workflow.type}.yaml`));
  });

  it('loads the valid files and reports a bad one with its file, path and line', () => {
    writeFileSync(join(dir, 'echo.yaml'), VALID);
    writeFileSync(join(dir, 'broken.yaml'), VALID.replace('type: echo', 'type: broken').replace('{{input.text}}', '{{input.txt}}'));
    const loaded = loadWorkflowsDir(dir);
    expect([...loaded.workflows.keys()]).toEqual(['echo']);
    expect(loaded.errors).toEqual([
      { file: join(dir, 'broken.yaml'), path: 'agents[0].prompt.user', message: '{{input.txt}}: "txt" is not declared in the schema', line: 5 },
    ]);
  });

  it('refuses a second file declaring a type already loaded, naming both files', () => {
    writeFileSync(join(dir, 'a.yaml'), VALID);
    writeFileSync(join(dir, 'b.yml'), VALID);
    writeFileSync(join(dir, 'notes.txt'), 'not a workflow');
    const loaded = loadWorkflowsDir(dir);
    expect([...loaded.workflows.values()].map((w) => w.source)).toEqual([join(dir, 'a.yaml')]);
    expect(loaded.errors).toEqual([{ file: join(dir, 'b.yml'), path: 'type', message: `duplicate type "echo": already declared in ${join(dir, 'a.yaml')}` }]);
  });

  it('reports YAML syntax errors with their line', () => {
    writeFileSync(join(dir, 'bad.yaml'), 'type: x\nagents: [\n');
    const [issue] = loadWorkflowsDir(dir).errors;
    expect(issue).toMatchObject({ file: join(dir, 'bad.yaml'), path: '(yaml)' });
    expect(issue!.line).toBeGreaterThan(0);
  });

  it('reports a directory that cannot be read', () => {
    const loaded = loadWorkflowsDir(join(dir, 'missing'));
    expect(loaded.workflows.size).toBe(0);
    expect(loaded.errors[0]).toMatchObject({ file: join(dir, 'missing'), path: '(directory)' });
  });

  it('keeps the previous version of a workflow whose file became invalid on reload', () => {
    writeFileSync(join(dir, 'echo.yaml'), VALID);
    writeFileSync(join(dir, 'other.yaml'), VALID.replace('type: echo', 'type: other'));
    const before = loadWorkflowsDir(dir).workflows;
    writeFileSync(join(dir, 'echo.yaml'), VALID.replace('role: echo', 'role: Echo'));
    writeFileSync(join(dir, 'other.yaml'), VALID.replace('type: echo', 'type: other').replace('Say', 'Repeat'));
    const reloaded = loadWorkflowsDir(dir);
    expect(reloaded.errors.map((e) => [e.file, e.path])).toEqual([[join(dir, 'echo.yaml'), 'agents[0].role']]);
    const next = mergeReloadedWorkflows(before, reloaded);
    expect(next.get('echo')).toBe(before.get('echo'));
    expect(next.get('other')).toBe(reloaded.workflows.get('other'));
  });

  it('drops a workflow whose file was removed', () => {
    writeFileSync(join(dir, 'echo.yaml'), VALID);
    const before = loadWorkflowsDir(dir).workflows;
    rmSync(join(dir, 'echo.yaml'));
    expect(mergeReloadedWorkflows(before, loadWorkflowsDir(dir)).size).toBe(0);
  });
});

describe('parseWorkflowYaml', () => {
  it('gives the line of the offending node', () => {
    const text = readFileSync(join(SHIPPED, 'incident_review.yaml'), 'utf8').replace('after: [log_reader, historian]', 'after: [log_reader, historien]');
    const checked = parseWorkflowYaml(text, 'incident_review.yaml');
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    const issue = checked.issues.find((i) => i.path.endsWith('.after[1]'))!;
    expect(issue.message).toBe('unknown role "historien" (roles: triage, log_reader, historian, merge)');
    expect(text.split('\n')[issue.line! - 1]).toContain('historien');
  });
});
