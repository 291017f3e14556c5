import { z } from 'zod';
import type { AgentDefinition, StepContext } from '../agents/agent-definition';
import { SUMMARY_INSTRUCTIONS, callForSummary } from '../agents/structured-summary';
import { stepCallFields } from '../agents/model-call-headers';
import { taskRequestMeta } from './doc-review.meta';
import { preparePassages } from './passages';

/** About 6,000 tokens: under the 8,000-token input cap (seed 000) with room for the prompt. */
export const EXTRACT_INPUT_CHAR_BUDGET = 24_000;

const ExtractInputSchema = z.object({
  document_id: z.string(),
  question: z.string(),
  text: z.string(),
  meta: z.unknown(),
});

const PreparedSchema = z.object({
  document_id: z.string(),
  passages: z.array(z.string()),
  total_chars: z.number(),
  kept_chars: z.number(),
  truncated: z.boolean(),
});

function input(ctx: StepContext) {
  return ExtractInputSchema.parse(ctx.task.inputSummary);
}

export const extractAgent: AgentDefinition = {
  role: 'extract',
  steps: [
    {
      name: 'prepare',
      async run(ctx) {
        const { document_id, question, text } = input(ctx);
        const prepared = preparePassages(text, question, EXTRACT_INPUT_CHAR_BUDGET);
        return {
          summary: {
            document_id,
            passages: prepared.passages,
            total_chars: prepared.totalChars,
            kept_chars: prepared.keptChars,
            truncated: prepared.truncated,
          },
        };
      },
    },
    {
      name: 'extract',
      async run(ctx) {
        const task = input(ctx);
        const prepared = PreparedSchema.parse(ctx.previous.get('prepare'));
        const result = await callForSummary(ctx.router, {
          ...stepCallFields(ctx),
          meta: taskRequestMeta(ctx.task.inputSummary, 'extract', 'low'),
          maxTokens: 512,
          messages: [
            {
              role: 'system',
              content: `You are an extraction agent. From the passages of one document, extract what bears on the question, quoting evidence verbatim. ${SUMMARY_INSTRUCTIONS}`,
            },
            {
              role: 'user',
              content: `Question: ${task.question}\n\nDocument "${prepared.document_id}"${prepared.truncated ? ' (most relevant passages)' : ''}:\n\n${prepared.passages.join('\n\n')}`,
            },
          ],
        });
        return {
          summary: { raw: result.raw },
          routes: result.routes,
          costUsd: result.costUsd,
          output: { ...result.summary, document_id: prepared.document_id },
        };
      },
    },
  ],
};
