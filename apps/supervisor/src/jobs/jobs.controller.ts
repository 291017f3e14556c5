import { Body, Controller, Get, Headers, HttpCode, HttpStatus, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiError } from '../http/api-error';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { Tenant } from '../auth/tenant.decorator';
import { parseJobListQuery } from './job-list.query';
import { JobEventsService } from './job-events.service';
import { JobsService } from './jobs.service';

@Controller('v1/jobs')
@UseGuards(ApiKeyGuard)
export class JobsController {
  constructor(
    private readonly jobs: JobsService,
    private readonly jobEvents: JobEventsService,
  ) {}

  @Post()
  @HttpCode(202)
  submit(@Tenant() tenant: string, @Body() body: unknown, @Headers('idempotency-key') idempotencyKey?: string) {
    if (typeof body === 'string') {
      throw new ApiError(HttpStatus.UNSUPPORTED_MEDIA_TYPE, 'unsupported_media_type', 'send the job as JSON with content-type: application/json');
    }
    return this.jobs.submit(tenant, body, idempotencyKey);
  }

  @Get()
  list(@Tenant() tenant: string, @Query() query: unknown) {
    return this.jobs.list(tenant, parseJobListQuery(query));
  }

  @Get(':id')
  get(@Tenant() tenant: string, @Param('id') id: string) {
    return this.jobs.get(tenant, id);
  }

  /** Server-sent events until the job ends (SPEC §6). */
  @Get(':id/events')
  async events(@Tenant() tenant: string, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    await this.jobEvents.stream(tenant, id, () => {
      reply.hijack();
      return reply.raw;
    });
  }

  @Post(':id/cancel')
  @HttpCode(200)
  cancel(@Tenant() tenant: string, @Param('id') id: string) {
    return this.jobs.cancel(tenant, id);
  }

  @Post(':id/retry')
  @HttpCode(202)
  retry(@Tenant() tenant: string, @Param('id') id: string) {
    return this.jobs.retry(tenant, id);
  }
}
