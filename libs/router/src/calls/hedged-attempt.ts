import type { RequestMeta } from '@switchyard/contracts';
import type { Logger } from '@switchyard/observability';
import type { RoutingDecision } from '../routing/routing-decision';
import { attemptTotalMs } from '../timing/staged-deadline';
import type { AttemptExecutor } from './attempt-executor';
import type { AttemptOutcome, ChatCallRequest } from './chat-call';
import { hedgeRace, type HedgeLeg, type ScheduleTimer } from './hedge-race';

export interface HedgedAttemptInput {
  decision: RoutingDecision;
  /** The primary's fleet slot (released when the primary ends). */
  releasePrimarySlot: () => void;
  hedgeAfterMs: number;
  meta: RequestMeta;
  request: ChatCallRequest;
  remainingMs: number;
  attempt: number;
  /** The next eligible candidate for the second leg, its slot taken and its budget spent; undefined when there is none. */
  pickHedge: () => Promise<{ decision: RoutingDecision; release: () => void } | undefined>;
}

export interface HedgedLegOutcome {
  decision: RoutingDecision;
  outcome: AttemptOutcome;
  attempt: number;
  /** Lost the race and was aborted upstream. */
  cancelled: boolean;
}

export interface HedgedAttemptResult {
  /** What the call goes on with: the winner, else the last leg that failed on its own. */
  decision: RoutingDecision;
  outcome: AttemptOutcome;
  legs: HedgedLegOutcome[];
}

/**
 * One attempt with a hedge (seed 003 §5.1), over the attempt executor: both legs run under the
 * same hard end (the primary's total budget), each leg's pieces reach a streaming caller only
 * once it won, and the loser's abort is an ordinary caller abort to the executor, so it costs
 * the losing target no health.
 */
export async function runHedgedAttempt(executor: AttemptExecutor, timer: ScheduleTimer, logger: Logger, input: HedgedAttemptInput): Promise<HedgedAttemptResult> {
  const { decision, meta, request } = input;
  const maxTokens = request.maxTokens ?? meta.max_output_tokens;
  const hardEnd = performance.now() + attemptTotalMs(decision.target, maxTokens, input.remainingMs, null);
  const decisions: RoutingDecision[] = [decision];
  const streaming = request.onDelta !== undefined || request.passThrough?.onEvents !== undefined;

  const legRequest = (leg: HedgeLeg): ChatCallRequest => ({
    ...request,
    signal: request.signal === undefined ? leg.signal : AbortSignal.any([request.signal, leg.signal]),
    ...(request.onDelta === undefined ? {} : { onDelta: (text: string, target: string) => leg.mayStream() && request.onDelta!(text, target) }),
    ...(request.passThrough?.onEvents === undefined
      ? {}
      : {
          passThrough: {
            ...request.passThrough,
            onEvents: (sse: string, target: string, restrictedBy?: readonly string[]) => leg.mayStream() && request.passThrough!.onEvents!(sse, target, restrictedBy),
          },
        }),
  });

  const race = await hedgeRace<AttemptOutcome>({
    hedgeAfterMs: input.hedgeAfterMs,
    decideOnFirstToken: streaming,
    timer,
    succeeded: (outcome) => outcome.ok && !outcome.badOutput,
    primary: async (leg) => {
      try {
        return await executor.run(decision, meta, legRequest(leg), input.remainingMs, input.attempt, () => leg.firstToken());
      } finally {
        input.releasePrimarySlot();
      }
    },
    hedge: async (leg) => {
      const hedge = await input.pickHedge();
      if (hedge === undefined) return undefined;
      if (leg.signal.aborted) {
        // The primary began answering while the hedge was being placed.
        hedge.release();
        return undefined;
      }
      decisions[1] = hedge.decision;
      logger.info(
        { target: hedge.decision.target.name, rule: hedge.decision.rule, hedged_from: decision.target.name, hedge_after_ms: input.hedgeAfterMs, attempt: input.attempt + 1 },
        'routing decision: hedged attempt (no first token yet from the first target)',
      );
      try {
        return await executor.run(hedge.decision, meta, legRequest(leg), Math.max(1, hardEnd - performance.now()), input.attempt + 1, () => leg.firstToken());
      } finally {
        hedge.release();
      }
    },
  });

  const legs = race.legs.map((leg): HedgedLegOutcome => {
    const outcome: AttemptOutcome = leg.cancelled && !leg.result.ok
      ? { ...leg.result, record: { ...leg.result.record, outcome: 'error', message: 'cancelled: the other hedged attempt answered first' } }
      : leg.result;
    return { decision: decisions[leg.index]!, outcome, attempt: input.attempt + leg.index, cancelled: leg.cancelled };
  });
  const chosen = legs.find((leg) => leg.attempt - input.attempt === race.winner) ?? [...legs].reverse().find((leg) => !leg.cancelled) ?? legs[0]!;
  if (legs.length > 1) {
    logger.info({ target: chosen.decision.target.name, winner: race.winner === undefined ? null : race.winner === 0 ? 'first' : 'hedge' }, 'hedged attempt settled');
  }
  return { decision: chosen.decision, outcome: chosen.outcome, legs };
}
