import type { ChatCompletionRequest } from './chat-request.schema';
import { lastUserMessage, messageText } from './reply-synthesis';

export interface SimToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** What the simulated model answers: text, or a call of one of the offered tools. */
export interface ReplyPlan {
  content: string;
  toolCalls: SimToolCall[] | null;
  finishReason: 'stop' | 'tool_calls' | 'length';
}

interface ToolDefinition {
  type?: string;
  function?: { name?: string; parameters?: { properties?: Record<string, { type?: string }>; required?: string[] } };
}

/**
 * Like a real tool-using model: offered tools and no tool result yet → it calls a tool (the one
 * `tool_choice` names, else the first), filling each required string argument from the user's
 * message; once the last message is a tool result → a text answer that uses it. `stop` cuts
 * the text at the first stop sequence, as OpenAI does (finish_reason stays `stop`).
 */
export function planReply(body: ChatCompletionRequest, text: string, seq: number): ReplyPlan {
  const tools = Array.isArray(body.tools) ? (body.tools as ToolDefinition[]) : [];
  const last = body.messages[body.messages.length - 1];
  const toolChoice = body.tool_choice;
  if (tools.length > 0 && last?.role !== 'tool' && toolChoice !== 'none') {
    const named = typeof toolChoice === 'object' && toolChoice !== null ? (toolChoice as { function?: { name?: string } }).function?.name : undefined;
    const tool = tools.find((t) => t.function?.name === named) ?? tools[0]!;
    const name = tool.function?.name ?? 'tool';
    const args: Record<string, unknown> = {};
    const properties = tool.function?.parameters?.properties ?? {};
    for (const key of tool.function?.parameters?.required ?? []) {
      const kind = properties[key]?.type;
      args[key] = kind === 'number' || kind === 'integer' ? 1 : kind === 'boolean' ? true : lastUserMessage(body.messages).slice(0, 60);
    }
    return { content: '', toolCalls: [{ id: `call_llmsim_${seq}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }], finishReason: 'tool_calls' };
  }
  const answer = last?.role === 'tool' ? `Using the tool result: ${messageText(last.content).slice(0, 200)}` : text;
  return { content: cutAtStop(answer, body.stop), toolCalls: null, finishReason: 'stop' };
}

export function cutAtStop(text: string, stop: unknown): string {
  const sequences = typeof stop === 'string' ? [stop] : Array.isArray(stop) ? stop.filter((s): s is string => typeof s === 'string' && s.length > 0) : [];
  let end = text.length;
  for (const sequence of sequences) {
    const at = text.indexOf(sequence);
    if (at >= 0 && at < end) end = at;
  }
  return text.slice(0, end);
}
