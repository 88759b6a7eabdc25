import { any, G1, G2, G3, phrase, SEP } from "./phrases";
import { type Emit, quote, type ScanText } from "./text";
import type { ScanSeverity } from "./types";

interface Pattern {
  pattern: RegExp;
  severity: ScanSeverity;
  /** The sentence's start; the quoted match follows it. */
  says: string;
}

const USER = any("user", "users", "human", "person", "operator", "owner", "requester");
const TELL = any(
  "tell",
  "telling",
  "inform",
  "informing",
  "mention",
  "mentioning",
  "reveal",
  "revealing",
  "notify",
  "notifying",
  "alert",
  "alerting",
  "disclose",
  "disclosing",
  "let",
  "letting",
  "warn",
  "warning",
  "explain",
  "explaining",
);
const COVERTLY = any("silently", "secretly", "quietly", "covertly", "discreetly", "invisibly", "stealthily", "surreptitiously");
const ACT = any(
  "send",
  "read",
  "include",
  "forward",
  "copy",
  "upload",
  "add",
  "append",
  "call",
  "pass",
  "attach",
  "post",
  "e-?mail",
  "exfiltrate",
  "collect",
  "log",
  "record",
  "transmit",
  "share",
  "store",
  "save",
  "bcc",
  "cc",
  "run",
  "execute",
  "invoke",
  "use",
);
const NOUN = any(
  "instructions?",
  "prompts?",
  "rules",
  "directions",
  "directives?",
  "guidelines",
  "guidance",
  "context",
  "constraints",
  "polic(?:y|ies)",
  "restrictions",
  "orders",
  "messages",
  "commands",
  "programming",
  "training",
);

/**
 * Text aimed at the model over the user's head. Real catalogs are full of honest imperatives ("IMPORTANT:
 * always use absolute paths", "Note to LLM: ..."); these are the phrasings that have no place in a tool's
 * description: setting aside the model's instructions, hiding things from the user, posing as the system.
 */
const PATTERNS: Pattern[] = [
  {
    pattern: phrase(
      `${any("ignore", "disregard", "forget", "override", "bypass", "abandon", "discard", "drop", "set aside")}${G3}${any("previous", "prior", "above", "earlier", "preceding", "former", "foregoing", "all", "any", "other", "original", "existing", "initial", "system", "developer", "safety", "your", "the", "these", "those", "every")}${G2}${NOUN}`,
    ),
    severity: "critical",
    says: "Tells the model to set aside its instructions",
  },
  {
    pattern: phrase(`${any("ignore", "disregard", "forget")}${SEP}(?:(?:all|everything|anything)${SEP})?(?:above|before|previously said|said before|else)`),
    severity: "critical",
    says: "Tells the model to set aside what it was told",
  },
  {
    pattern: phrase(
      `${any("supersedes?", "overrides?", "overrules?", "takes? precedence over", "replaces?")}${SEP}${any("all", "any", "every", "the", "your")}${G1}${NOUN}`,
    ),
    severity: "high",
    says: "Claims to override the model's instructions",
  },
  {
    pattern: phrase(
      `${any("these", "this", "the following", "my", "our")}${SEP}${any("instructions?", "rules?", "directives?", "notes?")}${SEP}${any("take", "takes", "have", "has", "get", "gets")}${SEP}${any("precedence", "priority")}`,
    ),
    severity: "high",
    says: "Claims priority over the model's instructions",
  },
  {
    pattern: phrase(
      `${any("do not", "don't", "dont", "never", "must not", "mustn't", "should not", "shouldn't", "without", "avoid")}${G2}${TELL}${G2}(?:the${SEP})?${USER}`,
    ),
    severity: "high",
    says: "Tells the model to keep something from the user",
  },
  {
    pattern: phrase(
      `${any("do not", "don't", "never", "must not")}${SEP}${any("mention", "reveal", "disclose", "acknowledge", "admit", "explain", "say", "report")}${G2}${any("this", "that", "these", "it", "anything", "the above", "the following", "that you")}`,
    ),
    severity: "high",
    says: "Tells the model to keep something from the user",
  },
  {
    pattern: phrase(`${any("hide", "hidden", "conceal", "concealed", "keep", "kept", "secret")}${G3}(?:from|away${SEP}from)${SEP}(?:the${SEP})?${USER}`),
    severity: "high",
    says: "Tells the model to keep something from the user",
  },
  {
    pattern: phrase(
      `(?:the${SEP})?${USER}${SEP}${any("must", "should", "will", "does", "do", "need", "needs", "shall")}(?:${SEP})?(?:not|never|n't)${SEP}(?:need${SEP}to${SEP})?${any("know", "see", "notice", "find out", "be told", "be informed", "be aware", "learn")}`,
    ),
    severity: "high",
    says: "Tells the model to keep something from the user",
  },
  {
    pattern: phrase(
      `${any("could", "would", "might", "will", "may")}${SEP}(?:even${SEP})?${any("upset", "scare", "alarm", "worry", "frighten", "confuse", "bother", "annoy")}${SEP}(?:the${SEP})?${USER}`,
    ),
    severity: "high",
    says: "Talks the model out of telling the user",
  },
  {
    pattern: phrase(`without${SEP}(?:the${SEP})?${USER}(?:'s|’s)?${SEP}${any("knowledge", "knowing", "noticing", "consent", "awareness", "permission")}`),
    severity: "high",
    says: "Tells the model to act without the user's knowledge",
  },
  {
    // The second form matches the rare adverb first, then looks back for the verb: starting at every common verb costs more.
    pattern: phrase(`${COVERTLY}${G1}${ACT}|${COVERTLY}(?<=\\b${ACT}${G3}${COVERTLY})`),
    severity: "high",
    says: "Tells the model to act covertly",
  },
  {
    pattern: phrase(`${any("regardless of", "no matter", "irrespective of")}${SEP}(?:what${SEP})?(?:the${SEP})?${USER}`),
    severity: "high",
    says: "Tells the model to act whatever the user says",
  },
  {
    pattern: phrase(`${any("instead of", "rather than")}${SEP}(?:what|doing${SEP}what)${SEP}(?:the${SEP})?${USER}`),
    severity: "high",
    says: "Tells the model to do something else than the user asked",
  },
  {
    pattern: phrase("you are now|you're now|you will now act|do anything now|(?:developer|god|jailbreak|jailbroken|dan|unrestricted|unfiltered) mode"),
    severity: "high",
    says: "Gives the model a new role",
  },
  {
    pattern: phrase(`${any("pretend", "imagine")}${SEP}(?:to${SEP}be|you${SEP}are|you're|that${SEP}you)`),
    severity: "high",
    says: "Gives the model a new role",
  },
  {
    pattern: phrase(
      `${any("act", "behave", "respond", "roleplay", "role-play")}${SEP}as${SEP}(?:(?:an?|the)${SEP})?${any("unrestricted", "unfiltered", "jailbroken", "uncensored", "administrator", "admin", "root", "system", "developer", "dan")}`,
    ),
    severity: "high",
    says: "Gives the model a new role",
  },
  {
    pattern: phrase(
      `${any("new", "updated", "real", "actual", "true", "hidden", "secret", "override", "revised", "important")}${SEP}(?:system${SEP})?${any("instructions?", "prompt", "directives?", "orders")}(?:${SEP})?:`,
    ),
    severity: "high",
    says: "Brings the model new instructions",
  },
  {
    pattern: phrase(
      `${any("reveal", "print", "output", "repeat", "show", "leak", "disclose", "dump")}${G2}(?:your|the)${SEP}${any("system prompt", "hidden prompt", "initial prompt", "instructions")}`,
    ),
    severity: "high",
    says: "Asks the model for its instructions",
  },
  {
    // Case matters: an uppercase role label is a forged turn; "System: Linux" is not.
    pattern: /\b(?:SYSTEM|ASSISTANT|DEVELOPER|ADMIN)(?: (?:MESSAGE|PROMPT|NOTE|OVERRIDE|INSTRUCTIONS?|UPDATE))?[ \t]{0,3}[:\]]/g,
    severity: "high",
    says: "Poses as a system message",
  },
  {
    // Uppercase labels are the pattern above's, anywhere; here the ordinary spelling, at the start of a line.
    pattern: /(?:^|\n)[ \t>#*[(]{0,8}(?:[Ss]ystem|[Aa]ssistant|[Hh]uman)(?:[ \t][Mm]essage)?[ \t]{0,3}:/g,
    severity: "high",
    says: "Poses as a turn of the conversation",
  },
  {
    pattern: /<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id|begin_of_text)\|>|\[\/?INST\]|<<\/?SYS>>/gi,
    severity: "high",
    says: "Carries a chat template's control token",
  },
  {
    pattern: /(?:^|\n)[ \t]{0,8}#{1,6}[ \t]{1,4}system(?:[ \t]{1,4}(?:prompt|message|instructions?))?\b/gi,
    severity: "high",
    says: "Poses as a system prompt",
  },
  {
    pattern:
      /<[ \t]{0,3}(?:important|secret|hidden|system|system[-_ ]?(?:prompt|message)|instructions?|admin|override|priority|sudo|directive|ai[-_ ]?(?:instructions?|note)|note[-_ ]?to[-_ ]?(?:ai|model|assistant|llm)|assistant)\b[^<>\n]{0,120}>/gi,
    severity: "high",
    says: "Opens a block addressed to the model",
  },
  {
    pattern: /<!--/g,
    severity: "warn",
    says: "Holds an HTML comment, which rendered text hides",
  },
  {
    pattern: /(?:^|\n)[ \t]{0,3}\[(?:\/\/|comment|hidden)\]:[ \t]{0,3}[#<]/gi,
    severity: "warn",
    says: "Holds a markdown comment, which rendered text hides",
  },
  {
    pattern: phrase(
      `${any("before", "prior to")}${SEP}(?:${any("using", "calling", "invoking", "running", "executing", "answering", "responding", "replying", "doing")}${SEP})?${any("any", "every", "all")}${SEP}(?:other${SEP})?${any("tools?", "functions?", "actions?", "requests?", "tasks?", "questions?", "responses?", "replies", "messages?")}`,
    ),
    severity: "warn",
    says: "Asks to come before everything else the model does",
  },
  {
    pattern: phrase(
      `${any("always", "must", "should", "need to", "needs to")}${G2}${any("call", "use", "run", "invoke", "execute")}${SEP}${any("this", "me")}(?:${SEP}${any("tool", "function")})?${SEP}${any("first", "before")}`,
    ),
    severity: "warn",
    says: "Asks to come before everything else the model does",
  },
  {
    pattern: phrase(
      `(?:note|message|instructions?)${SEP}(?:to|for)${SEP}(?:the${SEP})?${any("llm", "ai", "model", "assistant", "agent", "claude", "gpt", "chatgpt")}|${any("dear", "attention", "hey")},?${SEP}${any("ai", "assistant", "model", "llm", "claude", "chatgpt", "gpt")}`,
    ),
    severity: "info",
    says: "Addresses the model directly",
  },
];

/** model-instructions: each pattern over the visible text. */
export function modelInstructions(text: ScanText, emit: Emit): void {
  for (const { pattern, severity, says } of PATTERNS) {
    for (const m of text.all(pattern)) {
      emit({ rule: "model-instructions", severity, start: m.start, end: m.end, message: `${says}: ${quote(text.slice(m))}.` });
    }
  }
}
