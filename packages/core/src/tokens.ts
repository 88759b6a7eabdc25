/**
 * The one token estimate codemux shows (answers, previews, `codemux list`): about 4 characters a
 * token, close to o200k on JSON and English (`pnpm bench` measures with the real tokenizer).
 */
export function estimateTokens(text: string): number {
  return estimateTokensOfChars(text.length);
}

/** The same estimate from a length alone, for text measured in parts without joining them. */
export function estimateTokensOfChars(chars: number): number {
  return Math.ceil(chars / 4);
}
