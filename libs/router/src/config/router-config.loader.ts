import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { toFieldIssues, type FieldIssue } from '@switchyard/contracts';
import { compileRouterConfig, type CompiledRouterConfig } from './compile-router-config';
import { RouterConfigError } from './router-config.error';
import { RouterConfigFileSchema, type RouterConfig } from './router-config.schema';

/** Reads, validates and compiles a router config file. Throws `RouterConfigError`. */
export function loadRouterConfig(filePath: string): CompiledRouterConfig {
  let text: string;
  try {
    text = readFileSync(filePath, 'utf8');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new RouterConfigError(filePath, [{ path: '(file)', message: `cannot be read: ${reason}` }], { cause: error });
  }
  return parseRouterConfig(text, filePath);
}

/** Parses YAML text; `sourceName` (usually the file path) appears in every error. */
export function parseRouterConfig(yamlText: string, sourceName: string): CompiledRouterConfig {
  const lineCounter = new LineCounter();
  const document = parseDocument(yamlText, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0) {
    const issues = document.errors.map((error): FieldIssue => {
      const { line, col } = lineCounter.linePos(error.pos[0]);
      return { path: `(yaml) line ${line}, column ${col}`, message: error.message };
    });
    throw new RouterConfigError(sourceName, issues, { cause: document.errors[0] });
  }
  const value: unknown = document.toJS();
  const casesFile = withCanaryCasesFile(value, sourceName);
  return compileRouterConfig(validateRouterConfig(value, sourceName, casesFile), sourceName);
}

/** Validates an already-parsed document (`{router: {...}}`) and resolves every default. */
export function validateRouterConfig(value: unknown, sourceName: string, canaryCasesFile?: string): RouterConfig {
  const result = RouterConfigFileSchema.safeParse(value);
  if (!result.success) {
    const issues = toFieldIssues(result.error);
    throw new RouterConfigError(sourceName, canaryCasesFile === undefined ? issues : issues.map((issue) => inCasesFile(issue, canaryCasesFile)), { cause: result.error });
  }
  return result.data.router;
}

const CANARY_CASES_PATH = 'router.canaries.cases';

/** An issue in a case read from `cases_file` names that file and the case's path inside it. */
function inCasesFile(issue: FieldIssue, file: string): FieldIssue {
  if (issue.path !== CANARY_CASES_PATH && !issue.path.startsWith(`${CANARY_CASES_PATH}.`)) return issue;
  return { path: `router.canaries.cases_file (${file}) ${issue.path.slice('router.canaries.'.length)}`, message: issue.message };
}

/**
 * `router.canaries.cases_file` (relative to the config file): its `cases` are read into
 * `router.canaries.cases`, in place, before validation. Returns the resolved file, if any.
 */
function withCanaryCasesFile(value: unknown, sourceName: string): string | undefined {
  const canaries = (value as { router?: { canaries?: Record<string, unknown> } } | null)?.router?.canaries;
  if (typeof canaries !== 'object' || canaries === null || typeof canaries.cases_file !== 'string') return undefined;
  const issue = (message: string, cause?: unknown): never => {
    throw new RouterConfigError(sourceName, [{ path: 'router.canaries.cases_file', message }], { cause });
  };
  if (canaries.cases !== undefined) issue('give `cases` or `cases_file`, not both');
  const file = isAbsolute(canaries.cases_file) ? canaries.cases_file : resolve(dirname(sourceName), canaries.cases_file);
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    issue(`${file} cannot be read: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  const document = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0) issue(`${file} is not valid YAML: ${document.errors[0]!.message}`, document.errors[0]);
  const cases = (document.toJS() as { cases?: unknown } | null)?.cases;
  if (cases === undefined) issue(`${file} has no \`cases\` list`);
  canaries.cases = cases;
  return file;
}
