import { Body, Controller, Get, Headers, HttpCode, HttpStatus, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiError } from '../http/api-error';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { Tenant } from '../auth/tenant.decorator';
import { parseJobListQuery } from './job-list.query';
import { JobsService } from './jobs.service';

@Controller('v1/jobs')
@UseGuards(ApiKeyGuard)
export class JobsController {
  constructor(private readonly jobs: JobsService) {}

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

  @Post(':id/cancel')
  @HttpCode(200)
  cancel(@Tenant() tenant: string, @Param('id') id: string) {
    return this.jobs.cancel(tenant, id);
  }
}
