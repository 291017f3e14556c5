import { JobMetaSchema, RequestMetaSchema, type Complexity, type JobMeta, type RequestMeta, type TaskType } from '@switchyard/contracts';

/** The job's meta travels in every task's input so each model call carries it. */
export function taskRequestMeta(input: Record<string, unknown>, taskType: TaskType, complexity: Complexity): RequestMeta {
  const jobMeta: JobMeta = JobMetaSchema.parse(input.meta ?? {});
  return RequestMetaSchema.parse({
    task_type: taskType,
    complexity,
    sensitivity: jobMeta.sensitivity,
    priority: jobMeta.priority,
    tags: jobMeta.tags,
    ...(jobMeta.business_type ? { business_type: jobMeta.business_type } : {}),
  });
}
