import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { toFieldIssues, type FieldIssue } from '@switchyard/contracts';
import { loadMetaClassifier } from '../inference/load-meta-classifier';
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

/**
 * Parses YAML text; `sourceName` (usually the file path) appears in every error. Files the
 * config names (the inferred-meta examples) are read relative to `sourceName`'s folder.
 */
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
  const config = validateRouterConfig(document.toJS(), sourceName);
  const inferred = config.inferred_meta;
  const classifier = inferred.enabled ? loadMetaClassifier(resolve(dirname(sourceName), inferred.examples), sourceName) : undefined;
  return compileRouterConfig(config, sourceName, classifier);
}

/** Validates an already-parsed document (`{router: {...}}`) and resolves every default. */
export function validateRouterConfig(value: unknown, sourceName: string): RouterConfig {
  const result = RouterConfigFileSchema.safeParse(value);
  if (!result.success) throw new RouterConfigError(sourceName, toFieldIssues(result.error), { cause: result.error });
  return result.data.router;
}
