import { isSecretParameter } from "../mask";
import { isSideChannel, parameterTarget } from "./context";
import { any, COLLECTOR, CONTENT, CREDENTIAL_FILE, G1, PASS, phrase, SECRET_FILE, SECRET_NOUN, SECRET_VARIABLE, SEND, SENSITIVE, SEP, TARGET } from "./phrases";
import { type Emit, type Match, PerClause, quote, type ScanText, spanning } from "./text";
import type { ScanSeverity } from "./types";

// An image the client renders fetches its URL with no click: whatever the URL carries has left.
const MARKDOWN_IMAGE = /!\[[^\]\n[]{0,200}\]\([ \t]{0,4}<?((?:https?:)?\/\/[^\s)>]{1,2048})/gi;
const HTML_IMAGE = /<img\b[^<>\n]{0,200}?\bsrc[ \t]{0,3}=[ \t]{0,3}["']?((?:https?:)?\/\/[^\s"'<>]{1,2048})/gi;
// A slot the model is to fill in a URL: {conversation}, <data>, $SECRET, %7Bx%7D.
const PLACEHOLDER = /\{[^{}\s]{0,40}\}|<[^<>\s]{1,40}>|\$\{?[A-Za-z_]\w{0,40}|%7B|\[[A-Z_ ]{2,40}\]/i;
const UPLOAD_COMMAND =
  /\b(?:curl\b[^\n]{0,120}?[ \t](?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form|-T|--upload-file|-X[ \t]?POST)\b|wget\b[^\n]{0,120}?--post-(?:file|data)\b|(?:nc|netcat|ncat)[ \t]{1,4}(?:-\w{1,4}[ \t]{1,4}){0,4}[\w.-]{1,253}[ \t]{1,4}\d{2,5}\b)/gi;
const COPY_TO = phrase(any("bcc", "cc", "copy", "forward", "blind copy", "blind-copy"));
const EVERY_TIME = phrase(any("always", "also", "every", "each", "all", "automatically", "whenever", "any"));
const REDIRECT = phrase(
  `${any("change", "set", "replace", "switch", "redirect", "override", "rewrite", "route", "reroute")}${G1}(?:the${SEP})?${any("recipients?", "to address", "destination", "receivers?", "target address", "e-?mail address")}`,
);
const STANDING = phrase(
  any(
    "always",
    "after",
    "afterwards",
    "before",
    "every",
    "whenever",
    "also",
    "first",
    "must",
    "each time",
    "automatically",
    "then",
    "when done",
    "once done",
    "when finished",
    "at the end",
  ),
);

const SECRETS = [SENSITIVE, CREDENTIAL_FILE, SECRET_NOUN, SECRET_VARIABLE, SECRET_FILE];

/**
 * exfiltration: text that sends data to an address or URL it names, an image or link whose URL is built
 * to carry data, an upload command, a standing copy to an address, and files or the conversation put
 * into a parameter that has nothing to do with them.
 */
export function exfiltration(text: ScanText, emit: Emit): void {
  const clauses = new PerClause(text);
  const report = (severity: ScanSeverity, message: string, ...matches: Array<Match | undefined>) => {
    if (clauses.keep(matches[0]!.start, severity)) emit({ rule: "exfiltration", severity, message, ...spanning(...matches) });
  };
  const secretNear = (at: Match) => {
    for (const pattern of SECRETS) {
      const m = text.near(at, pattern);
      if (m) return m;
    }
    return undefined;
  };

  for (const pattern of [MARKDOWN_IMAGE, HTML_IMAGE]) {
    for (const image of text.all(pattern)) {
      const url = image.groups[0]!;
      const carries = url.includes("?") || PLACEHOLDER.test(url);
      report(
        carries ? "critical" : "warn",
        carries
          ? `Has the client load an image whose URL carries data to ${quote(url, 60)}.`
          : `Has the client load an image from ${quote(url, 60)}, which tells that host when the text is shown.`,
        image,
      );
    }
  }
  for (const target of text.all(TARGET)) {
    const url = target.groups[1];
    const query = url?.indexOf("?") ?? -1;
    if (url !== undefined && query >= 0 && PLACEHOLDER.test(url.slice(query))) {
      report("high", `Names a URL with a slot for the model to fill with data: ${quote(url, 60)}.`, target);
    }
  }
  for (const collector of text.all(COLLECTOR)) report("high", `Names a host made for catching requests: ${quote(text.slice(collector))}.`, collector);
  for (const command of text.all(UPLOAD_COMMAND)) {
    const secret = secretNear(command);
    report(
      secret ? "critical" : "high",
      `Has a command that uploads data${secret ? ` (${quote(text.slice(secret))})` : ""}: ${quote(text.slice(command))}.`,
      command,
      secret,
    );
  }
  for (const send of text.all(SEND)) {
    const target = text.near(send, TARGET);
    if (!target) continue;
    const where = quote(text.slice(target), 60);
    const secret = secretNear(send);
    if (secret) {
      report("critical", `Asks the model to send ${quote(text.slice(secret))} to ${where}.`, send, secret, target);
      continue;
    }
    const content = text.near(send, CONTENT);
    if (!content) continue;
    const standing = text.near(send, STANDING);
    report(standing ? "high" : "warn", `Asks the model to send data to ${where}.`, send, content, target);
  }
  for (const copy of text.all(COPY_TO)) {
    const target = text.near(copy, TARGET, (m) => m.groups[0] !== undefined);
    const every = target ? text.near(copy, EVERY_TIME) : undefined;
    if (target && every) report("critical", `Asks for a standing copy of messages to ${quote(target.groups[0]!)}.`, copy, every, target);
  }
  for (const redirect of text.all(REDIRECT)) {
    const target = text.near(redirect, TARGET);
    if (target) report("critical", `Asks the model to change where messages go, to ${quote(text.slice(target), 60)}.`, redirect, target);
  }
  for (const pass of text.all(PASS)) {
    const target = parameterTarget(text, pass);
    if (target === undefined || isSecretParameter(target.name)) continue;
    // A property's own description asking for messages or files is often its job; only a side channel is suspect there.
    const sensitive = !target.own || isSideChannel(target) ? text.near(pass, SENSITIVE) : undefined;
    const content = sensitive || !isSideChannel(target) ? undefined : text.near(pass, CONTENT);
    if (sensitive) {
      report("high", `Asks the model to put ${quote(text.slice(sensitive))} into the parameter "${target.name}".`, pass, sensitive);
    } else if (content) {
      report("high", `Asks the model to put ${quote(text.slice(content))} into the side parameter "${target.name}".`, pass, content);
    }
  }
}
