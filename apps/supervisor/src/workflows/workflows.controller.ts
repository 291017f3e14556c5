import { Controller, Get, Inject, UseGuards } from '@nestjs/common';
import { WorkflowCatalog } from '@switchyard/orchestration';
import { ApiKeyGuard } from '../auth/api-key.guard';

/** `GET /v1/workflows`: the job types a tenant may submit, with their input schema. */
@Controller('v1/workflows')
@UseGuards(ApiKeyGuard)
export class WorkflowsController {
  constructor(@Inject(WorkflowCatalog) private readonly catalog: WorkflowCatalog) {}

  @Get()
  list() {
    const workflows = [...this.catalog.workflows.values()].sort((a, b) => a.type.localeCompare(b.type));
    return {
      workflows: workflows.map((workflow) => ({
        type: workflow.type,
        ...(workflow.description ? { description: workflow.description } : {}),
        input_schema: workflow.inputSchema,
        roles: workflow.agents.map((agent) => ({ role: agent.role, after: agent.after, optional: agent.optional, ...(agent.forEach ? { for_each: agent.forEach.path.join('.') } : {}) })),
      })),
    };
  }
}
