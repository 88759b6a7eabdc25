/** Lines of a JSDoc comment at `indent`; hostile text can neither close the comment nor break lines unexpectedly. */
export function jsDoc(lines: readonly string[], indent = ""): string {
  const clean = lines.flatMap((line) => line.split(/\r\n|[\r\n\u2028\u2029]/)).map((line) => escapeCommentText(line).trimEnd());
  while (clean.length > 0 && clean[0] === "") clean.shift();
  while (clean.length > 0 && clean[clean.length - 1] === "") clean.pop();
  if (clean.length === 0) return "";
  if (clean.length === 1) return `${indent}/** ${clean[0]} */\n`;
  return `${indent}/**\n${clean.map((line) => (line === "" ? `${indent} *` : `${indent} * ${line}`)).join("\n")}\n${indent} */\n`;
}

function escapeCommentText(text: string): string {
  // Control characters carry no meaning in documentation and some confuse editors and terminals.
  return text.replace(/\*\//g, "*\\/").replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "");
}
