import { createHash } from 'node:crypto';
import type { JobContext, TaskLeaseRepository } from '@switchyard/state';
import { compileWorkflow, type CompiledWorkflow, type WorkflowDefinition } from '@switchyard/workflows';

/** The hash a stored workflow definition is known by (its JSON, as stored on the job's root row). */
export function workflowHash(definition: unknown): string {
  return createHash('sha256').update(JSON.stringify(definition)).digest('hex');
}

/**
 * Workflow versions by hash: a job runs the definition it was planned with, whatever the file
 * says now. Each version is compiled once per process.
 */
export class WorkflowVersions {
  private readonly compiled = new Map<string, CompiledWorkflow>();

  has(hash: string): boolean {
    return this.compiled.has(hash);
  }

  get(hash: string): CompiledWorkflow | undefined {
    return this.compiled.get(hash);
  }

  /** Remembers an already compiled workflow (the ones this process loaded from files). */
  remember(workflow: CompiledWorkflow): string {
    const hash = workflowHash(workflow.definition);
    if (!this.compiled.has(hash)) this.compiled.set(hash, workflow);
    return hash;
  }

  /** Compiles a stored definition (throws WorkflowDefinitionError when it no longer compiles). */
  compile(hash: string, definition: Record<string, unknown>, source: string): CompiledWorkflow {
    const existing = this.compiled.get(hash);
    if (existing) return existing;
    const workflow = compileWorkflow(definition as WorkflowDefinition, source);
    this.compiled.set(hash, workflow);
    return workflow;
  }
}

/**
 * The workflow version a job was planned with, and its meta: from the cache by the hash on its
 * root row (`known` when the caller read it already, as a claim does), else compiled from the
 * definition stored there. Throws when the job has none.
 */
export async function workflowOfJob(
  tasks: Pick<TaskLeaseRepository, 'findJobContext' | 'findWorkflowDefinition'>,
  versions: WorkflowVersions,
  jobId: string,
  known?: Pick<JobContext, 'meta' | 'workflowHash' | 'jobType'>,
): Promise<{ workflow: CompiledWorkflow; meta: unknown }> {
  const job = known ?? (await tasks.findJobContext(jobId));
  if (!job?.workflowHash) throw new Error(`job ${jobId} has no workflow version`);
  const cached = versions.get(job.workflowHash);
  if (cached) return { workflow: cached, meta: job.meta };
  const definition = await tasks.findWorkflowDefinition(jobId);
  if (!definition) throw new Error(`job ${jobId} has no stored workflow definition`);
  return { workflow: versions.compile(job.workflowHash, definition, `job ${jobId} (${job.jobType})`), meta: job.meta };
}
