import { z } from 'zod';
import { RequestMetaSchema, SafeString, ValidationError, toFieldIssues, type RequestMeta } from '@switchyard/contracts';

/** Text parts of a multi-part message are joined; images and audio are not routed here. */
const ContentSchema = z.union([
  SafeString,
  z.array(z.object({ type: z.literal('text'), text: SafeString })).min(1).transform((parts) => parts.map((part) => part.text).join('')),
]);

const MessageSchema = z.object({
  // `developer` is OpenAI's newer name for `system`.
  role: z.enum(['system', 'developer', 'user', 'assistant']).transform((role) => (role === 'developer' ? 'system' : role)),
  content: ContentSchema,
});

/**
 * The request meta in the body's `metadata`. The OpenAI SDK types `metadata` as string
 * values, so numbers and tag lists also arrive as strings and are read here.
 */
const MetadataSchema = z
  .record(SafeString, z.unknown())
  .optional()
  .transform((raw) => {
    if (raw === undefined) return {};
    const out: Record<string, unknown> = { ...raw };
    if (typeof out.tags === 'string') out.tags = out.tags.split(',').map((tag) => tag.trim()).filter((tag) => tag.length > 0);
    for (const key of ['timeout_ms', 'max_output_tokens', 'estimated_input_tokens']) {
      if (typeof out[key] === 'string' && /^\d+$/.test(out[key])) out[key] = Number(out[key]);
    }
    return out;
  })
  .pipe(RequestMetaSchema);

/** An OpenAI chat-completions request. Unknown OpenAI parameters are accepted and ignored. */
export const ChatCompletionRequestSchema = z.object({
  model: SafeString.max(200).optional(),
  messages: z.array(MessageSchema).min(1, 'at least one message is required'),
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: z.number().int().min(1).optional(),
  max_completion_tokens: z.number().int().min(1).optional(),
  stream: z.boolean().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
  response_format: z.object({ type: z.enum(['text', 'json_object', 'json_schema']) }).passthrough().optional(),
  n: z.literal(1, { error: 'only n: 1 is supported' }).optional(),
  metadata: MetadataSchema,
});

export type ChatCompletionRequest = z.output<typeof ChatCompletionRequestSchema>;

export interface ParsedChatRequest {
  body: ChatCompletionRequest;
  meta: RequestMeta;
  maxTokens: number | undefined;
}

export function parseChatCompletionRequest(body: unknown): ParsedChatRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ValidationError([{ path: '(body)', message: 'expected a JSON object with `messages`' }]);
  }
  const parsed = ChatCompletionRequestSchema.safeParse(body);
  if (!parsed.success) throw new ValidationError(toFieldIssues(parsed.error));
  const maxTokens = parsed.data.max_completion_tokens ?? parsed.data.max_tokens ?? parsed.data.metadata.max_output_tokens;
  return { body: parsed.data, meta: parsed.data.metadata, maxTokens };
}
