/**
 * Whether a description marks its tool deprecated: "DEPRECATED: use X", "This tool is
 * deprecated", "(deprecated)", not a tool that merely lists deprecated things.
 */
export function saysDeprecated(description: string): boolean {
  return /(?:^|[.!:(\[]\s*|\b(?:is|now|been)\s+)deprecated\b|\bdeprecated\s*[:.;)\]]/i.test(description.trim());
}

/** The tool name a deprecation notice points to: "Use read_text_file instead", "replaced by `search_v2`". */
export function replacementName(description: string): string | undefined {
  // After the word "deprecated" first: "Use this tool to read. DEPRECATED: use read_text_file".
  const at = description.search(/deprecated/i);
  for (const text of at > 0 ? [description.slice(at), description] : [description]) {
    const match = /\b(?:use|replaced by|superseded by|in favou?r of)\s+[`'"]?([A-Za-z0-9_.:-]*[A-Za-z0-9])[`'"]?/i.exec(text);
    if (match) return match[1];
  }
  return undefined;
}
