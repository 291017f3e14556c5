/**
 * A rough input size: about four characters per token for English text. The single place
 * to swap in a real tokenizer.
 */
export function estimateTokens(messages: readonly { content: string }[]): number {
  let characters = 0;
  for (const message of messages) characters += message.content.length;
  return Math.ceil(characters / 4);
}
