/**
 * The one token estimate codemux shows (answers, previews, `codemux list`): about 4 characters a
 * token, close to o200k on JSON and English (`pnpm bench` measures with the real tokenizer).
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
