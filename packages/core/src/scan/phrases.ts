/**
 * The patterns the rules read text with. Each is written to run in linear time on hostile text: every
 * quantifier is bounded, and a repeated group alternates classes that cannot overlap (separators, then a
 * word), so a failed match backtracks a bounded number of steps from each starting point. The
 * adversarial tests run each over a few megabytes.
 */

/** 1 to 4 separators between two words of a phrase (no line break: a phrase stays on its line). */
export const SEP = "[ \\t\\u00A0,]{1,4}";
const WORD = "[\\w'’]{1,24}";

/** Up to `n` words of any kind between two parts of a phrase. */
const gap = (n: number) => `(?:${SEP}${WORD}){0,${n}}${SEP}`;

/** A case-insensitive global pattern from source text; `\b` at both ends (at the start only when it ends on punctuation). */
export const phrase = (source: string, flags = "gi") => new RegExp(`\\b(?:${source})${/[\w)]$/.test(source) ? "\\b" : ""}`, flags);

/** Alternatives as a group. */
export const any = (...words: string[]) => `(?:${words.join("|")})`;

export const G1 = gap(1);
export const G2 = gap(2);
export const G3 = gap(3);

// ---- verbs and objects the rules combine ----

/** Reading something (a file, a key). */
export const READ = phrase(
  "read|reads|reading|cat|open|opens|load|loads|get|fetch|retrieve|access|print|dump|collect|gather|grab|extract|copy|obtain|harvest|look up|check the contents of|find",
);

/** Putting something into an argument, a reply or a message. */
export const PASS = phrase(
  "pass|passes|passing|include|includes|including|put|insert|add|append|appending|attach|embed|paste|provide|supply|fill|set|place|encode|stuff|smuggle|concatenate|prepend",
);

/** Sending something somewhere. */
export const SEND = phrase(
  "send|sends|sending|sent|e-?mail|e-?mails|e-?mailing|mail|mails|post|posts|posting|upload|uploads|uploading|forward|forwards|forwarding|transmit|transmits|exfiltrate|exfiltrates|leak|leaks|submit|submits|deliver|delivers|beacon|bcc|cc|relay|relays",
);

/** An address or URL the text names: group 1 is an e-mail address, group 2 a URL, group 3 a bare host or IP. */
export const TARGET = new RegExp(
  [
    "(?<![\\w.+%-])([\\w.+%-]{1,64}@[A-Za-z0-9-]{1,63}(?:\\.[A-Za-z0-9-]{1,63}){1,8})",
    // A URL's last character is not sentence punctuation: "see https://x.dev/a." ends at "a".
    "((?:https?|ftp|wss?):\\/\\/[^\\s\"'<>()\\[\\]`]{0,2047}[^\\s\"'<>()\\[\\]`.,;:!?])",
    "(?<![\\w.-])((?:\\d{1,3}\\.){3}\\d{1,3}(?::\\d{1,5})?|[A-Za-z0-9-]{1,63}\\.(?:com|net|org|io|xyz|ru|cn|tk|top|site|online|app|dev|me|co|info|biz|sh|ly|cc|pw|link|click)\\b(?:\\/[^\\s\"'<>()]{0,256})?)",
  ].join("|"),
  "gi",
);

/** Hosts made for catching requests: a URL to one is a collection point whatever the text around it says. */
export const COLLECTOR = phrase(
  "webhook\\.site|requestbin(?:\\.\\w{2,8})?|pipedream\\.net|ngrok(?:-free)?\\.(?:io|app|dev)|burpcollaborator\\.net|interact\\.sh|oast\\.(?:fun|live|pro|site|online|me)|beeceptor\\.com|hookbin\\.com|canarytokens\\.com|requestcatcher\\.com|webhook\\.cool",
);

/** A parameter as a destination: groups 1 to 4 hold its name (quoted, or before or after a word such as "parameter"); none for "the tool's arguments". */
export const PARAMETER = new RegExp(
  [
    `\\b(?:as|in|into|inside|within|to|via|through|under|using|in${SEP}the)${SEP}(?:(?:the|a|an|its|their|your)${SEP})?(?:[\`'"‘“]([\\w.-]{1,64})[\`'"’”]|(?!(?:the|a|an|its|their|your|this|that)\\b)([\\w.-]{1,64})${SEP}(?:parameter|param|argument|arg|field|property|input|attribute))`,
    `\\b(?:parameter|param|argument|field|property)${SEP}(?:(?:named|called)${SEP}[\`'"‘“]?([\\w.-]{1,64})|[\`'"‘“]([\\w.-]{1,64})[\`'"’”])`,
    `\\b(?:to|in|into|inside|within)${SEP}(?:(?:the|its|their|all|every|each)${SEP})?(?:tool${SEP})?(?:arguments?|parameters?|params|inputs?)\\b`,
  ].join("|"),
  "gi",
);

/** Any word, for finding a tool's own parameter names in "as note". */
export const AS_WORD = new RegExp(`\\b(?:as|in|into|inside|to|via|under)${SEP}(?:(?:the|a|its|their)${SEP})?[\`'"‘“]?([\\w-]{1,64})`, "gi");

/** Parameter names that carry nothing a tool needs for its work: a classic side channel for smuggled data. */
export const SIDE_CHANNEL = new Set([
  "note",
  "notes",
  "sidenote",
  "side_note",
  "comment",
  "comments",
  "context",
  "metadata",
  "meta",
  "extra",
  "extras",
  "debug",
  "debug_info",
  "feedback",
  "annotation",
  "remark",
  "remarks",
  "memo",
  "info",
  "details",
  "reasoning",
  "trace",
  "log",
  "diagnostics",
  "telemetry",
  "session",
  "state",
  "hint",
  "tag",
  "tags",
  "misc",
  "additional_info",
  "extra_data",
]);

// ---- what is worth taking ----

/** A credential file or a key by its well-known name (strong: naming it has no ordinary reason in a tool's description). */
export const CREDENTIAL_FILE = new RegExp(
  `(?<![\\w.-])(?:(?:~|\\$HOME|%USERPROFILE%|\\/root|\\/home\\/[\\w.-]{1,32}|\\/Users\\/[\\w.-]{1,32})[\\/\\\\])?(?:${[
    "\\.ssh(?:\\/[\\w.-]{0,63}[\\w-])?",
    "id[_ ](?:rsa|dsa|ecdsa|ed25519)(?!\\.pub)",
    "authorized_keys",
    "\\.aws\\/(?:credentials|config)",
    "[._]netrc|\\.git-credentials|\\.pgpass|\\.my\\.cnf|\\.vault-token|\\.docker\\/config\\.json|\\.kube\\/config|\\.config\\/gcloud|application_default_credentials\\.json",
    "\\/etc\\/(?:shadow|gshadow|sudoers|master\\.passwd)",
    "\\.(?:bash|zsh|sh|python|node_repl|psql|mysql)_history",
    "(?:\\.cursor\\/)?mcp\\.json|claude_desktop_config\\.json|\\.claude\\.json",
    "\\.gnupg|secring\\.gpg|wallet\\.dat|login\\.keychain(?:-db)?",
    "-----BEGIN[ A-Z]{0,24} PRIVATE KEY-----",
  ].join("|")})(?![\\w-])`,
  "gi",
);

/** Files that may hold secrets and have ordinary reasons to be named (weak). */
export const SECRET_FILE = new RegExp(
  `(?<![^\\s"'\`(\\/~])(\\.env(?:\\.[\\w-]{1,20})?|\\.npmrc|\\.pypirc|kubeconfig|(?:credentials|secrets?)\\.(?:json|ya?ml|toml|ini|txt)|[\\w-]{1,40}\\.(?:pem|p12|pfx|ppk|keystore|jks))\\b`,
  "gi",
);

/** Names of secrets in prose (weak alone). */
export const SECRET_NOUN = phrase(
  [
    "api[ _-]?keys?|access[ _-]?(?:keys?|tokens?)|auth(?:entication)?[ _-]?tokens?|bearer tokens?|refresh tokens?|session (?:tokens?|cookies?)",
    "secret(?: access)?[ _-]?keys?|private[ _-]?keys?|ssh[ _-]?keys?|passwords?|passphrases?|credentials?|cookies|seed phrases?|recovery phrases?|mnemonic(?: phrase)?",
    "(?:2fa|otp|mfa|one-time) (?:codes?|passwords?)|client secrets?|secrets|(?:your|the user's|their|personal access|oauth|github|gitlab|slack|npm|openai|anthropic|aws) tokens?",
    "(?:all |the )?environment variables|env vars|process\\.env|os\\.environ|printenv",
  ].join("|"),
);

/** An environment variable that holds a secret (`AWS_SECRET_ACCESS_KEY`, `GITHUB_TOKEN`). */
export const SECRET_VARIABLE =
  /\b[A-Z][A-Z0-9]{0,20}(?:_[A-Z0-9]{1,20}){0,6}_(?:API_?KEY|KEY|SECRET|SECRET_KEY|TOKEN|ACCESS_TOKEN|PASSWORD|PASSWD|PAT|CREDENTIALS?|PRIVATE_KEY)\b/g;

/** What belongs to the user or the conversation and has no business leaving it. */
export const SENSITIVE = phrase(
  [
    `(?:(?:the|your|this)${SEP})?(?:(?:entire|full|whole|complete)${SEP})?(?:conversation(?:${SEP}(?:history|so far|log))?|chat${SEP}(?:history|log|transcript)|message${SEP}history|(?:previous|prior|earlier|past)${SEP}messages)`,
    `(?:your|the)${SEP}(?:system${SEP}prompt|instructions|initial${SEP}prompt)|system${SEP}prompt`,
    `(?:the${SEP})?user(?:'s|’s)${SEP}(?:messages?|files?|data|e-?mails?|documents?|prompts?|requests?|quer(?:y|ies)|questions?|inputs?|contacts|history|notes)`,
    `(?:all|every)${SEP}(?:(?:the|of${SEP}the|their|your)${SEP})?(?:files|e-?mails|messages|documents|data|contacts|repositories|repos|conversations|chats|notes|keys|secrets|tokens)`,
    `(?:whole|entire)${SEP}(?:file|directory|folder|workspace|repo(?:sitory)?|home${SEP}directory|disk)`,
  ].join("|"),
);

/** What a tool could move: the file, its contents, the results. */
export const CONTENT = phrase(
  `(?:(?:its|their|the|this|that|file|full|entire)${SEP})?contents?|the${SEP}(?:file|files|result|results|output|data|response|text)|everything|it|them|a${SEP}copy`,
);

// ---- directives ----

/** Words that tell the model what to do about something. */
export const DIRECTIVE = phrase(
  `must|should|shall|always|never|instead|rather${SEP}than|before|after|whenever|when${SEP}(?:you${SEP})?(?:call|use|invoke|run)(?:s|ing)?|when${SEP}(?:calling|using|invoking)|do${SEP}not|don't|redirect|redirects|override|overrides|replace|replaces|intercept|reroute|route|deprecated|disabled|broken|unsafe|prefer|change|modify|also|first`,
);
