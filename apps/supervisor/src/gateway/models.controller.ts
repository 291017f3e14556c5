import { Controller, Get, UseFilters, UseGuards } from '@nestjs/common';
import { listedModels, Router } from '@switchyard/router';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { OpenAiErrorFilter } from './openai-error.filter';

/** `GET /v1/models`: OpenAI's model list — `auto` (the router decides) and every alias of `router.models`. */
@Controller('v1/models')
@UseGuards(ApiKeyGuard)
@UseFilters(OpenAiErrorFilter)
export class ModelsController {
  constructor(private readonly router: Router) {}

  @Get()
  list(): { object: 'list'; data: { id: string; object: 'model'; created: number; owned_by: string }[] } {
    return { object: 'list', data: listedModels(this.router.config.config.models).map((id) => ({ id, object: 'model', created: 0, owned_by: 'switchyard' })) };
  }
}
