import type { JobSubmission, JobType } from '@switchyard/contracts';
import { planDocReview } from '../doc-review/doc-review.planner';
import type { JobPlan, JobPlanner, PlanContext } from './job-plan';

/** One planner per job type, checked by the compiler: a new type without a planner does not build. */
const PLANNERS: { [T in JobType]: JobPlanner } = {
  doc_review: planDocReview,
};

export function planJob(submission: JobSubmission, ctx: PlanContext): JobPlan {
  return PLANNERS[submission.type](submission, ctx);
}
