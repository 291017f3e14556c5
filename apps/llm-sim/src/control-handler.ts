import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from '@switchyard/observability';
import { z } from 'zod';
import type { CallLog } from './call-log';
import { readBody, sendJson } from './http-io';
import { ModeChangeSchema } from './mode-change.schema';
import type { PlanFaults } from './plan-reply';
import type { TargetServer } from './target-server';
import { firstIssue } from './zod-issues';

export interface ControlDeps {
  targets: ReadonlyMap<string, TargetServer>;
  callLog: CallLog;
  logger: Logger;
  planFaults?: PlanFaults;
}

const PlanFaultsSchema = z.strictObject({ invalid_next: z.number().int().min(0).max(1000) });

const CallsQuerySchema = z.object({
  target: z.string().min(1).optional(),
  since_seq: z
    .string()
    .regex(/^\d+$/, 'must be a non-negative integer')
    .transform(Number)
    .optional(),
});

const MODE_ROUTE = /^\/targets\/([^/]+)\/mode$/;

function controlError(res: ServerResponse, status: number, message: string, field: string | null = null): void {
  sendJson(res, status, { error: { message, field } });
}

/** Parses a JSON body with `schema`; on failure answers 400 naming the field and returns null. */
async function readJson<T>(req: IncomingMessage, res: ServerResponse, schema: z.ZodType<T>): Promise<T | null> {
  const raw = await readBody(req);
  let json: unknown;
  try {
    json = raw.trim() === '' ? undefined : JSON.parse(raw);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    controlError(res, 400, `body is not valid JSON: ${error.message}`);
    return null;
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = firstIssue(parsed.error);
  controlError(res, 400, issue.message, issue.param);
  return null;
}

/** The fault-drill API: inspect targets, switch their modes, read and clear the call log. */
export function createControlHandler(deps: ControlDeps): RequestListener {
  const { targets, callLog, logger, planFaults } = deps;
  const snapshots = () => [...targets.values()].map((target) => target.snapshot());

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://llm-sim.control');
    const path = url.pathname;
    const method = req.method ?? '';

    if (method === 'GET' && path === '/health') return sendJson(res, 200, { status: 'ok' });
    if (method === 'GET' && path === '/targets') return sendJson(res, 200, { targets: snapshots() });

    const modeRoute = MODE_ROUTE.exec(path);
    if (modeRoute && method === 'PUT') {
      const name = decodeURIComponent(modeRoute[1] ?? '');
      const target = targets.get(name);
      if (!target) return controlError(res, 404, `unknown target "${name}"; known: ${[...targets.keys()].join(', ')}`);
      const change = await readJson(req, res, ModeChangeSchema);
      if (change === null) return;
      return sendJson(res, 200, await target.setMode(change));
    }

    if (path === '/calls' && method === 'GET') {
      const parsed = CallsQuerySchema.safeParse(Object.fromEntries(url.searchParams));
      if (!parsed.success) {
        const issue = firstIssue(parsed.error);
        return controlError(res, 400, issue.message, issue.param);
      }
      return sendJson(res, 200, { calls: callLog.query({ target: parsed.data.target, sinceSeq: parsed.data.since_seq }) });
    }
    if (path === '/plans' && method === 'PUT' && planFaults) {
      const change = await readJson(req, res, PlanFaultsSchema);
      if (change === null) return;
      return sendJson(res, 200, planFaults.set(change.invalid_next));
    }
    if (path === '/calls' && method === 'DELETE') {
      for (const target of targets.values()) target.resetPeak();
      return sendJson(res, 200, { cleared: callLog.clear() });
    }

    if (method === 'POST' && path === '/reset') {
      const reset = await Promise.all([...targets.values()].map((target) => target.setMode({ mode: 'ok' })));
      planFaults?.set(0);
      const cleared = callLog.clear();
      for (const target of targets.values()) target.resetPeak();
      logger.info({ cleared }, 'simulator reset');
      return sendJson(res, 200, { targets: reset.map((snapshot) => ({ ...snapshot, calls: callLog.countsFor(snapshot.name), peak_concurrency: 0 })), cleared });
    }

    controlError(res, 404, `unknown route: ${method} ${path}`);
  }

  return (req, res) => {
    route(req, res).catch((error: unknown) => {
      logger.error({ err: error, method: req.method, url: req.url }, 'control request failed');
      if (res.headersSent) res.destroy();
      else controlError(res, error instanceof URIError ? 400 : 500, error instanceof Error ? error.message : String(error));
    });
  };
}
