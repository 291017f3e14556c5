/**
 * Whether a reply asked for as JSON is a JSON object (a fenced ```json block counts).
 * Used only to judge the target; the caller still gets the reply and decides what to do.
 */
export function looksLikeJsonObject(content: string): boolean {
  let text = content.trim();
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*```$/i.exec(text);
  if (fenced) text = fenced[1]!;
  if (!text.startsWith('{')) return false;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}
