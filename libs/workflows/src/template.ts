import { StructuredSummarySchema } from '@switchyard/contracts';
import { preparePassages } from './passages';

/**
 * Prompt templates: text with `{{reference | filter(arg, ...)}}` placeholders. Parsed once
 * at load (`parseTemplate`), checked against what the agent may see (see compile-workflow),
 * rendered per task by the pure `renderTemplate`.
 */

export type TemplateReference =
  | { kind: 'input'; path: string[] }
  | { kind: 'item'; path: string[] }
  | { kind: 'outputs'; role: string; path: string[] }
  | { kind: 'summaries'; role: string }
  | { kind: 'task'; path: string[] }
  | { kind: 'steps'; step: string; path: string[] }
  | { kind: 'dependencies' }
  | { kind: 'subtasks' };

export type FilterArgument = { kind: 'reference'; reference: TemplateReference; source: string } | { kind: 'literal'; value: string | number };

export interface FilterCall {
  name: FilterName;
  args: FilterArgument[];
}

export interface Placeholder {
  source: string;
  reference: TemplateReference;
  filters: FilterCall[];
}

/** How the tasks of a role are labelled in `{{summaries.ROLE}}` (set when the workflow compiles). */
export interface SummaryLabels {
  [role: string]: { label: string; perItem: boolean };
}

export interface CompiledTemplate {
  source: string;
  parts: Array<string | Placeholder>;
  labels: SummaryLabels;
}

/** One finished (or given-up) task as templates and results see it. */
export interface TaskOutcome {
  taskId: string;
  status: string;
  output: unknown;
  /** The item key (for_each `key`) or the subtask id of a planned task. */
  key?: string;
}

export interface RenderContext {
  input: unknown;
  item?: unknown;
  outputs?: Record<string, unknown>;
  summaries?: Record<string, readonly TaskOutcome[]>;
  task?: { instruction: string };
  steps?: Record<string, unknown>;
  dependencies?: readonly TaskOutcome[];
  subtasks?: readonly TaskOutcome[];
}

export interface Rendered {
  text: string;
  /** Placeholders that had no value (rendered as empty text). */
  warnings: string[];
}

export const FILTERS = {
  /** `text | passages(question, maxChars)`: the passages most relevant to the question, within the budget. */
  passages: 2,
  /** `text | passages_note(question, maxChars)`: " (most relevant passages)" when `passages` had to leave text out. */
  passages_note: 2,
  /** `value | json`: compact JSON, for strings too. */
  json: 0,
} as const;
export type FilterName = keyof typeof FILTERS;

const SEGMENT = /^[A-Za-z_][A-Za-z0-9_-]*$|^\d+$/;

export function parseTemplate(source: string): { template: CompiledTemplate; errors: string[] } {
  const parts: Array<string | Placeholder> = [];
  const errors: string[] = [];
  let at = 0;
  while (at < source.length) {
    const open = source.indexOf('{{', at);
    if (open < 0) {
      parts.push(source.slice(at));
      break;
    }
    if (open > at) parts.push(source.slice(at, open));
    const close = source.indexOf('}}', open + 2);
    if (close < 0) {
      errors.push(`"{{" at character ${open} is never closed with "}}"`);
      break;
    }
    const inner = source.slice(open + 2, close).trim();
    const parsed = parsePlaceholder(inner);
    if (typeof parsed === 'string') errors.push(`{{${inner}}}: ${parsed}`);
    else parts.push(parsed);
    at = close + 2;
  }
  return { template: { source, parts, labels: {} }, errors };
}

function parsePlaceholder(inner: string): Placeholder | string {
  const [head, ...pipes] = splitOutsideQuotes(inner, '|').map((s) => s.trim());
  if (!head) return 'empty placeholder';
  const reference = parseReference(head);
  if (typeof reference === 'string') return reference;
  const filters: FilterCall[] = [];
  for (const pipe of pipes) {
    const match = /^([a-z_]+)\s*(?:\((.*)\))?$/s.exec(pipe);
    if (!match) return `cannot read filter "${pipe}"`;
    const name = match[1]!;
    if (!Object.hasOwn(FILTERS, name)) return `unknown filter "${name}" (known: ${Object.keys(FILTERS).join(', ')})`;
    const rawArgs = match[2]?.trim() ? splitOutsideQuotes(match[2], ',').map((s) => s.trim()) : [];
    const arity: number = FILTERS[name as FilterName];
    if (rawArgs.length !== arity) return `filter "${name}" takes ${arity} argument${arity === 1 ? '' : 's'}, got ${rawArgs.length}`;
    const args: FilterArgument[] = [];
    for (const raw of rawArgs) {
      if (/^-?\d+(\.\d+)?$/.test(raw)) args.push({ kind: 'literal', value: Number(raw) });
      else if (/^"[^"]*"$|^'[^']*'$/.test(raw)) args.push({ kind: 'literal', value: raw.slice(1, -1) });
      else {
        const ref = parseReference(raw);
        if (typeof ref === 'string') return `filter "${name}": ${ref}`;
        args.push({ kind: 'reference', reference: ref, source: raw });
      }
    }
    filters.push({ name: name as FilterName, args });
  }
  return { source: inner, reference, filters };
}

function parseReference(text: string): TemplateReference | string {
  const segments = text.split('.');
  if (!segments.every((s) => SEGMENT.test(s))) return `cannot read "${text}" as a reference (names joined by dots)`;
  const [root, ...rest] = segments as [string, ...string[]];
  switch (root) {
    case 'input':
    case 'item':
      return { kind: root, path: rest };
    case 'task':
      if (rest.length !== 1 || rest[0] !== 'instruction') return `unknown variable "${text}" (task has only task.instruction)`;
      return { kind: 'task', path: rest };
    case 'outputs':
      if (!rest[0]) return 'outputs needs a role: outputs.ROLE';
      return { kind: 'outputs', role: rest[0], path: rest.slice(1) };
    case 'summaries':
      if (rest.length !== 1) return 'summaries takes exactly a role: summaries.ROLE';
      return { kind: 'summaries', role: rest[0]! };
    case 'steps':
      if (!rest[0]) return 'steps needs a step name: steps.NAME';
      return { kind: 'steps', step: rest[0], path: rest.slice(1) };
    case 'dependencies':
    case 'subtasks':
      if (rest.length > 0) return `${root} takes no path`;
      return { kind: root };
    default:
      return `unknown variable "${text}" (known: input, item, outputs, summaries, task, steps, dependencies, subtasks)`;
  }
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const out: string[] = [];
  let current = '';
  let quote: string | null = null;
  for (const ch of text) {
    if (quote) {
      if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
    } else if (ch === separator) {
      out.push(current);
      current = '';
      continue;
    }
    current += ch;
  }
  out.push(current);
  return out;
}

/** Every reference a template makes, filter arguments included. */
export function referencesOf(template: CompiledTemplate): Array<{ reference: TemplateReference; source: string }> {
  const refs: Array<{ reference: TemplateReference; source: string }> = [];
  for (const part of template.parts) {
    if (typeof part === 'string') continue;
    refs.push({ reference: part.reference, source: part.source });
    for (const filter of part.filters) for (const arg of filter.args) if (arg.kind === 'reference') refs.push({ reference: arg.reference, source: arg.source });
  }
  return refs;
}

/** Pure: the same template and context always give the same text. A missing value renders as '' with a warning. */
export function renderTemplate(template: CompiledTemplate, context: RenderContext): Rendered {
  const warnings: string[] = [];
  let text = '';
  for (const part of template.parts) {
    if (typeof part === 'string') {
      text += part;
      continue;
    }
    let value = resolve(part.reference, context, template.labels);
    if (value === undefined) {
      warnings.push(`{{${part.source}}}: no value`);
      continue;
    }
    for (const filter of part.filters) {
      const args = filter.args.map((arg) => (arg.kind === 'literal' ? arg.value : resolve(arg.reference, context, template.labels)));
      value = applyFilter(filter.name, value, args);
    }
    text += toText(value);
  }
  return { text, warnings };
}

function resolve(reference: TemplateReference, context: RenderContext, labels: SummaryLabels): unknown {
  switch (reference.kind) {
    case 'input':
      return walk(context.input, reference.path);
    case 'item':
      return walk(context.item, reference.path);
    case 'task':
      return walk(context.task, reference.path);
    case 'outputs':
      return walk(context.outputs?.[reference.role], reference.path);
    case 'steps':
      return walk(context.steps?.[reference.step], reference.path);
    case 'summaries': {
      const tasks = context.summaries?.[reference.role];
      const label = labels[reference.role] ?? { label: reference.role, perItem: false };
      return tasks === undefined ? undefined : formatSummaries(tasks, label.label, label.perItem);
    }
    case 'dependencies':
    case 'subtasks': {
      const tasks = context[reference.kind];
      return tasks === undefined ? undefined : formatSummaries(tasks, 'Subtask', true);
    }
  }
}

function walk(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function applyFilter(name: FilterName, value: unknown, args: unknown[]): unknown {
  switch (name) {
    case 'json':
      return JSON.stringify(value);
    case 'passages':
    case 'passages_note': {
      const prepared = preparePassages(toText(value), toText(args[0]), Number(args[1]));
      if (name === 'passages') return prepared.passages.join('\n\n');
      return prepared.truncated ? ' (most relevant passages)' : '';
    }
  }
}

function toText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * The tasks of a role, compactly: one entry per task with its conclusion, confidence and
 * evidence (a non-summary output as compact JSON), labelled by item key; tasks without
 * an output are named once at the end.
 */
export function formatSummaries(tasks: readonly TaskOutcome[], label: string, perItem: boolean): string {
  const lines: string[] = [];
  const missing: string[] = [];
  tasks.forEach((task, index) => {
    const name = task.key !== undefined ? `${label} "${task.key}"` : perItem ? `${label} #${index + 1}` : label;
    if (task.status !== 'success' || task.output === undefined || task.output === null) {
      missing.push(task.key ?? name);
      return;
    }
    const summary = StructuredSummarySchema.safeParse(task.output);
    if (!summary.success) {
      lines.push(`${name}: ${JSON.stringify(task.output)}`);
      return;
    }
    const { conclusion, evidence, confidence } = summary.data;
    const evidenceLines = evidence.map((e) => `  - ${e}`).join('\n');
    lines.push(`${name} (confidence ${confidence === null ? 'unknown' : confidence.toFixed(2)}): ${conclusion}${evidenceLines ? `\n${evidenceLines}` : ''}`);
  });
  return `${lines.join('\n')}${missing.length ? `\n\nNo findings for: ${missing.join(', ')}` : ''}`;
}
