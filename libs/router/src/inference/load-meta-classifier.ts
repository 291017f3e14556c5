import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { toFieldIssues, type FieldIssue } from '@switchyard/contracts';
import { RouterConfigError } from '../config/router-config.error';
import { MetaClassifier } from './meta-classifier';
import { MetaExamplesFileSchema } from './meta-examples.schema';

/**
 * Reads and validates the examples file `router.inferred_meta.examples` names and builds the
 * classifier. Any problem (unreadable, bad YAML, an unknown label, an invalid rule pattern) is
 * a `RouterConfigError` of the router config `source`, naming the examples file and the entry,
 * so a reload with a bad file keeps the old config.
 */
export function loadMetaClassifier(examplesPath: string, source: string): MetaClassifier {
  const where = `router.inferred_meta.examples (${examplesPath})`;
  let text: string;
  try {
    text = readFileSync(examplesPath, 'utf8');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new RouterConfigError(source, [{ path: where, message: `cannot be read: ${reason}` }], { cause: error });
  }
  const document = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0) {
    throw new RouterConfigError(source, document.errors.map((error): FieldIssue => ({ path: where, message: `not valid YAML: ${error.message}` })), { cause: document.errors[0] });
  }
  const parsed = MetaExamplesFileSchema.safeParse(document.toJS());
  if (!parsed.success) {
    const issues = toFieldIssues(parsed.error).map((issue) => ({ path: `${where} ${issue.path}`, message: issue.message }));
    throw new RouterConfigError(source, issues, { cause: parsed.error });
  }
  return MetaClassifier.fromExamples(parsed.data);
}
