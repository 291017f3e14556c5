import { z } from 'zod';

const ContentPartSchema = z.looseObject({ type: z.string(), text: z.string().optional() });

const ChatMessageSchema = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: z.union([z.string(), z.array(ContentPartSchema), z.null()]).optional(),
});

/**
 * The part of the OpenAI chat-completions body the simulator reads. Unknown fields are
 * accepted, as vLLM and the OpenAI API accept `top_p`, `seed`, `user` and friends.
 */
export const ChatCompletionRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(ChatMessageSchema).min(1),
  max_tokens: z.number().int().positive().nullish(),
  max_completion_tokens: z.number().int().positive().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  response_format: z.looseObject({ type: z.enum(['text', 'json_object', 'json_schema']) }).nullish(),
  tools: z.array(z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string().min(1) }) })).nullish(),
  tool_choice: z.unknown().optional(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).nullish(),
  seed: z.number().int().nullish(),
  n: z.number().int().min(1).max(8).nullish(),
});

export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequestSchema>;
export type ChatMessage = z.infer<typeof ChatMessageSchema>;
