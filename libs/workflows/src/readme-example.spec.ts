import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatWorkflowIssue } from './compiled-workflow';
import { parseWorkflowYaml } from './load-workflows';

/** The README's worked example must stay a valid workflow, and its quoted error must stay true. */
const readme = readFileSync(join(__dirname, '../README.md'), 'utf8');
const block = /```yaml\n([\s\S]*?)```/.exec(readme)![1]!;
const example = block
  .split('\n')
  .map((line) => line.replace(/^ {3}/, ''))
  .join('\n');

describe('README worked example', () => {
  it('loads', () => {
    const checked = parseWorkflowYaml(example, 'contract_check.yaml');
    expect(checked.ok ? [] : checked.issues).toEqual([]);
  });

  it('gives the error the README quotes for a misspelt role', () => {
    const checked = parseWorkflowYaml(example.replace('{{summaries.clause_checker}}', '{{summaries.clause_cheker}}'), 'config/workflows/contract_check.yaml');
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    const quoted = formatWorkflowIssue(checked.issues[0]!);
    expect(readme).toContain(quoted);
  });
});
