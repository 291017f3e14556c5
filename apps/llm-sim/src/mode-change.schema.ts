import { z } from 'zod';
import { FAULT_MODES } from './fault-state';

/** Body of `PUT /targets/:name/mode`. Strict, so a typo such as `delayMs` is a 400, not a silent default. */
export const ModeChangeSchema = z
  .strictObject({
    mode: z.enum(FAULT_MODES),
    delay_ms: z.number().int().min(0).max(3_600_000).optional(),
    retry_after_s: z.number().int().min(0).max(86_400).optional(),
    fail_ratio: z.number().min(0).max(1).optional(),
    count: z.number().int().min(1).optional(),
  })
  .superRefine((change, ctx) => {
    // A down port sees no requests, so a ratio or a window could never be applied.
    if (change.mode !== 'down') return;
    for (const key of ['fail_ratio', 'count'] as const) {
      if (change[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: `does not apply to mode down` });
    }
  });

export type ModeChangeBody = z.infer<typeof ModeChangeSchema>;
