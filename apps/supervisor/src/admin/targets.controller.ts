import { Body, Controller, Get, HttpCode, Inject, Param, Post, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { RequestMetaSchema, ValidationError, toFieldIssues } from '@switchyard/contracts';
import type { Logger } from '@switchyard/observability';
import { LOGGER, RouterRuntime } from '@switchyard/platform';
import { Router, UnknownTargetError, estimateTokens, type OverrideAction } from '@switchyard/router';
import { AdminTokenGuard } from '../auth/admin-token.guard';
import { ApiError } from '../http/api-error';

export const ExplainSchema = z.union([
  z.strictObject({ meta: RequestMetaSchema, messages: z.array(z.object({ role: z.string().optional(), content: z.string() })).optional() }),
  RequestMetaSchema,
]);
export const ForcePrimarySchema = z.strictObject({ target: z.string().min(1).nullable() });
export const ReadOnlySchema = z.strictObject({ enabled: z.boolean() });

/** Redis commands wait through a reconnect; an admin request must answer anyway. */
function within<T>(ms: number, work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: Redis did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

function parse<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const parsed = schema.safeParse(body ?? {});
  if (!parsed.success) throw new ValidationError(toFieldIssues(parsed.error));
  return parsed.data;
}

/**
 * Operators' view of and hands on the model targets: state, breaker, score, share,
 * latency; the explanation of a decision; drain / enable; the manual primary switch.
 * Overrides are fleet-wide: written to Redis and announced, so every worker's router
 * applies them too; GET /admin/targets adds every process's view (`fleet`).
 */
@Controller('admin')
@UseGuards(AdminTokenGuard)
export class AdminTargetsController {
  constructor(
    private readonly router: Router,
    private readonly runtime: RouterRuntime,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * This supervisor's view of each target, plus `fleet`: every process's view and an aggregate;
   * `network` and `banner`: whether this process found its own network down ("is it me or them").
   */
  @Get('targets')
  async targets() {
    const local = this.router.snapshot();
    const network = this.router.networkStatus();
    const alert = { network, banner: network.banner };
    try {
      const fleet = await within(2_000, this.runtime.fleet(), 'fleet view');
      const processes = new Map<string, { processId: string; role: string; ageMs: number }>();
      for (const view of fleet.values()) {
        for (const p of view.processes) if (!processes.has(p.processId)) processes.set(p.processId, { processId: p.processId, role: p.role, ageMs: p.ageMs });
      }
      return {
        read_only: this.router.readOnly,
        targets: local.map((target) => ({ ...target, fleet: fleet.get(target.name) ?? null })),
        fleet: { self: this.runtime.identity.processId, processes: [...processes.values()] },
        ...alert,
      };
    } catch (error) {
      this.logger.warn({ err: String(error) }, 'admin: fleet view unavailable; answering with this process only');
      return {
        read_only: this.router.readOnly,
        targets: local.map((target) => ({ ...target, fleet: null })),
        fleet: null,
        fleetError: 'the fleet view is unavailable (Redis did not answer)',
        ...alert,
      };
    }
  }

  /**
   * Body: request meta (`{task_type, sensitivity, …}`), or `{meta, messages}` to estimate the
   * input size — and, when `meta` leaves out `task_type` or `complexity`, to infer them from the
   * last user message as the gateway would (shown as `inferred`).
   */
  @Post('routing/explain')
  @HttpCode(200)
  explain(@Body() body: unknown) {
    const input = parse(ExplainSchema, body);
    if (!('meta' in input)) return this.router.explain(input);
    if (input.messages === undefined) return this.router.explain(input.meta);
    const given = (body as { meta: Record<string, unknown> }).meta;
    const inference = this.router.inferMeta(given, input.messages);
    const meta = { ...input.meta, ...inference?.fields, estimated_input_tokens: estimateTokens(input.messages) };
    return this.router.explain(meta, inference?.inferred);
  }

  @Post('targets/:name/drain')
  @HttpCode(200)
  async drain(@Param('name') name: string) {
    await this.act({ action: 'drain', target: name });
    return this.one(name);
  }

  @Post('targets/:name/enable')
  @HttpCode(200)
  async enable(@Param('name') name: string) {
    await this.act({ action: 'enable', target: name });
    return this.one(name);
  }

  /** Body `{target: "<name>"}` to force, `{target: null}` to return to normal routing. Never moves sensitive work off local targets. */
  @Post('routing/force-primary')
  @HttpCode(200)
  async forcePrimary(@Body() body: unknown) {
    const { target } = parse(ForcePrimarySchema, body);
    await this.act({ action: 'force_primary', target });
    return { forced_primary: target, note: 'sensitive requests are still only ever served by local targets' };
  }

  /**
   * Body `{enabled: true}`: read-only mode fleet-wide (a double outage) — no model calls; the
   * gateway serves cached answers and answers everything else 503 `read_only`; durable tasks
   * wait. `{enabled: false}` resumes normal routing.
   */
  @Post('read-only')
  @HttpCode(200)
  async readOnly(@Body() body: unknown) {
    const { enabled } = parse(ReadOnlySchema, body);
    await this.act({ action: 'read_only', enabled });
    return { read_only: enabled, note: enabled ? 'no model calls are made: cached answers only; other gateway calls get 503 read_only and durable tasks wait' : 'model calls resume' };
  }

  /** Checks the name here (404), then writes the fleet-wide override, announces it, and applies it locally. */
  private async act(change: OverrideAction): Promise<void> {
    if ('target' in change && change.target !== null && !this.router.config.targetsByName.has(change.target)) {
      throw ApiError.notFound(`target "${change.target}"`);
    }
    try {
      await within(5_000, this.runtime.applyOverride(change), 'router override');
    } catch (error) {
      if (error instanceof UnknownTargetError) throw ApiError.notFound(`target "${error.target}"`);
      this.logger.error({ err: String(error), change }, 'admin: could not share a router override through Redis');
      throw ApiError.unavailable('overrides_unavailable', `the override could not be shared through Redis (${error instanceof Error ? error.message : String(error)}); it is not in force yet, retry when Redis answers`);
    }
  }

  private one(name: string) {
    return this.router.snapshot().find((target) => target.name === name);
  }
}
