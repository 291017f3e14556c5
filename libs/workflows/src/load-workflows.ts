import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isNode, LineCounter, parseDocument, type Document } from 'yaml';
import type { CompiledWorkflow, WorkflowIssue } from './compiled-workflow';
import { checkWorkflow, type WorkflowCheck } from './compile-workflow';

export interface LoadedWorkflows {
  /** Every valid workflow, keyed by its `type`. */
  workflows: Map<string, CompiledWorkflow>;
  /** Every problem of every rejected file; the files without problems still load. */
  errors: WorkflowIssue[];
}

/** Parses and compiles one workflow file's text; `source` (the file path) is named in every issue. */
export function parseWorkflowYaml(text: string, source: string): WorkflowCheck {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0) {
    return {
      ok: false,
      issues: document.errors.map((error) => ({ file: source, path: '(yaml)', message: error.message, line: lineCounter.linePos(error.pos[0]).line })),
    };
  }
  const checked = checkWorkflow(document.toJS(), source);
  if (checked.ok) return checked;
  return { ok: false, issues: checked.issues.map((issue) => withLine(issue, document, lineCounter)) };
}

function withLine(issue: WorkflowIssue, document: Document, lineCounter: LineCounter): WorkflowIssue {
  const segments = (issue.path.match(/[^.[\]]+/g) ?? []).map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  for (let length = segments.length; length > 0; length -= 1) {
    const node = document.getIn(segments.slice(0, length), true);
    if (isNode(node) && node.range) return { ...issue, line: lineCounter.linePos(node.range[0]).line };
  }
  return issue;
}

/**
 * Loads every `*.yaml` / `*.yml` file of a directory (in name order). A file with any
 * problem is left out and its problems are reported; a second file declaring a `type`
 * already loaded is refused, naming both files.
 */
export function loadWorkflowsDir(dir: string): LoadedWorkflows {
  let files: string[];
  try {
    files = readdirSync(dir)
      .filter((name) => /\.ya?ml$/.test(name))
      .sort();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { workflows: new Map(), errors: [{ file: dir, path: '(directory)', message: `cannot be read: ${reason}` }] };
  }
  const workflows = new Map<string, CompiledWorkflow>();
  const errors: WorkflowIssue[] = [];
  for (const name of files) {
    const file = join(dir, name);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      errors.push({ file, path: '(file)', message: `cannot be read: ${error instanceof Error ? error.message : String(error)}` });
      continue;
    }
    const checked = parseWorkflowYaml(text, file);
    if (!checked.ok) {
      errors.push(...checked.issues);
      continue;
    }
    const existing = workflows.get(checked.workflow.type);
    if (existing) {
      errors.push({ file, path: 'type', message: `duplicate type "${checked.workflow.type}": already declared in ${existing.source}` });
      continue;
    }
    workflows.set(checked.workflow.type, checked.workflow);
  }
  return { workflows, errors };
}

/**
 * The set to use after a reload: every valid file's workflow; where a file was rejected,
 * the workflows that file gave before stay (as `router.yaml` keeps its old config).
 */
export function mergeReloadedWorkflows(previous: ReadonlyMap<string, CompiledWorkflow>, reloaded: LoadedWorkflows): Map<string, CompiledWorkflow> {
  const next = new Map(reloaded.workflows);
  const rejectedFiles = new Set(reloaded.errors.map((issue) => issue.file));
  for (const [type, workflow] of previous) {
    if (rejectedFiles.has(workflow.source) && !next.has(type)) next.set(type, workflow);
  }
  return next;
}
