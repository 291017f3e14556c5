import { z } from 'zod';
import { StructuredSummarySchema } from '@switchyard/contracts';
import type { AgentDefinition } from '../agents/agent-definition';
import { stepCallFields } from '../agents/model-call-headers';
import { SUMMARY_INSTRUCTIONS, callForSummary } from '../agents/structured-summary';
import { taskRequestMeta } from './doc-review.meta';

const DocumentSummarySchema = StructuredSummarySchema.extend({
  document_id: z.string(),
  task_id: z.string(),
});
type DocumentSummary = z.infer<typeof DocumentSummarySchema>;

const GatheredSchema = z.object({
  documents: z.array(DocumentSummarySchema),
  missing: z.array(z.object({ document_id: z.string(), task_id: z.string(), status: z.string() })),
});

const SynthesizeInputSchema = z.object({ question: z.string(), meta: z.unknown() });

function describe(doc: DocumentSummary): string {
  const evidence = doc.evidence.map((e) => `  - ${e}`).join('\n');
  const confidence = doc.confidence === null ? 'unknown' : doc.confidence.toFixed(2);
  return `Document "${doc.document_id}" (confidence ${confidence}): ${doc.conclusion}${evidence ? `\n${evidence}` : ''}`;
}

export const synthesizeAgent: AgentDefinition = {
  role: 'synthesize',
  after: ['extract'],
  steps: [
    {
      // Fan-in: the extract agents' structured summaries, read from Postgres, never their raw text.
      name: 'gather',
      async run(ctx) {
        const extracted = await ctx.readRole('extract');
        const documents: DocumentSummary[] = [];
        const missing: z.infer<typeof GatheredSchema>['missing'] = [];
        for (const task of extracted) {
          const documentId = String(task.input.document_id ?? task.agentId);
          const summary = StructuredSummarySchema.safeParse(task.output);
          if (task.status === 'success' && summary.success) {
            documents.push({ ...summary.data, document_id: documentId, task_id: task.taskId });
          } else {
            missing.push({ document_id: documentId, task_id: task.taskId, status: task.status });
          }
        }
        return { summary: { documents, missing } };
      },
    },
    {
      name: 'synthesize',
      async run(ctx) {
        const { question } = SynthesizeInputSchema.parse(ctx.task.inputSummary);
        const gathered = GatheredSchema.parse(ctx.previous.get('gather'));
        const result = await callForSummary(ctx.router, {
          ...stepCallFields(ctx),
          meta: taskRequestMeta(ctx.task.inputSummary, 'reasoning', 'high'),
          maxTokens: 1_024,
          messages: [
            {
              role: 'system',
              content: `You are a synthesis agent. Combine the per-document findings into one answer to the question; cite document ids in the evidence; lower the confidence where documents disagree or are missing. ${SUMMARY_INSTRUCTIONS}`,
            },
            {
              role: 'user',
              content: `Question: ${question}\n\nFindings:\n${gathered.documents.map(describe).join('\n')}${
                gathered.missing.length ? `\n\nNo findings for: ${gathered.missing.map((m) => m.document_id).join(', ')}` : ''
              }`,
            },
          ],
        });
        return {
          summary: { raw: result.raw },
          routes: result.routes,
          costUsd: result.costUsd,
          output: result.summary,
          jobResult: {
            synthesis: result.summary,
            documents: gathered.documents,
            ...(gathered.missing.length ? { missing: gathered.missing } : {}),
          },
        };
      },
    },
  ],
};
