import { watch, type FSWatcher } from 'node:fs';
import { resolve } from 'node:path';
import type { Logger } from '@switchyard/observability';
import { formatWorkflowIssue, loadWorkflowsDir, mergeReloadedWorkflows, type CompiledWorkflow, type LoadedWorkflows, type WorkflowIssue } from '@switchyard/workflows';

export interface WorkflowCatalogOptions {
  dir: string;
  logger: Logger;
  debounceMs?: number;
  /** Defaults to reading and compiling the directory. */
  load?: (dir: string) => LoadedWorkflows;
}

/**
 * The job types of WORKFLOWS_DIR, kept current: loaded at start, watched, reloaded after a
 * short debounce. A file with any problem is left out with its file, path and message logged;
 * on a reload the workflows a rejected file gave before stay (as `router.yaml` keeps its old
 * config). `errors` are the problems of the last load, for /readyz.
 */
export class WorkflowCatalog {
  private current = new Map<string, CompiledWorkflow>();
  private lastErrors: WorkflowIssue[] = [];
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners: Array<(workflows: ReadonlyMap<string, CompiledWorkflow>) => void> = [];
  private readonly dir: string;

  constructor(private readonly options: WorkflowCatalogOptions) {
    this.dir = resolve(options.dir);
    this.reload();
  }

  get workflows(): ReadonlyMap<string, CompiledWorkflow> {
    return this.current;
  }

  get errors(): readonly WorkflowIssue[] {
    return this.lastErrors;
  }

  /** Every role of every workflow (a role name shared by two workflows is one queue). */
  roles(): string[] {
    return [...new Set([...this.current.values()].flatMap((workflow) => workflow.agents.map((agent) => agent.role)))].sort();
  }

  onChange(listener: (workflows: ReadonlyMap<string, CompiledWorkflow>) => void): void {
    this.listeners.push(listener);
  }

  reload(): void {
    const loaded = (this.options.load ?? loadWorkflowsDir)(this.dir);
    for (const issue of loaded.errors) {
      this.options.logger.error({ file: issue.file, path: issue.path, line: issue.line }, `workflow rejected: ${formatWorkflowIssue(issue)}`);
    }
    const next = mergeReloadedWorkflows(this.current, loaded);
    const changed = next.size !== this.current.size || [...next].some(([type, workflow]) => this.current.get(type) !== workflow);
    this.current = next;
    this.lastErrors = loaded.errors;
    if (!changed) return;
    this.options.logger.info({ dir: this.dir, types: [...next.keys()].sort(), rejected: loaded.errors.length }, 'workflows loaded');
    for (const listener of this.listeners) listener(next);
  }

  start(): void {
    if (this.watcher) return;
    this.watcher = watch(this.dir, { persistent: false }, () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.reload(), this.options.debounceMs ?? 200);
      this.timer.unref();
    });
    this.watcher.on('error', (error) => this.options.logger.error({ err: error, dir: this.dir }, 'workflow watcher failed'));
  }

  stop(): void {
    clearTimeout(this.timer);
    this.watcher?.close();
    this.watcher = undefined;
  }
}
