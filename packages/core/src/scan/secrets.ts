import { isSideChannel, parameterTarget } from "./context";
import { CREDENTIAL_FILE, PASS, READ, SECRET_FILE, SECRET_NOUN, SECRET_VARIABLE, SEND } from "./phrases";
import { type Emit, type Match, PerClause, quote, type RawFinding, type ScanText, spanning } from "./text";

/**
 * secret-reference: a credential file named at all is a warning (a tool's description has no ordinary
 * reason to name `~/.ssh/id_rsa`); asked to be read or sent it is high; asked to be passed through a
 * parameter it is critical. Weaker names (`.env`, "API key", `GITHUB_TOKEN`) are ordinary in a
 * description: noted (`info`), and critical only when the text asks for them to be passed through a parameter.
 */
export function secretReferences(text: ScanText, emit: Emit): void {
  const clauses = new PerClause(text);
  const report = (at: Match, finding: Omit<RawFinding, "rule" | "start" | "end">, ...others: Array<Match | undefined>) => {
    if (clauses.keep(at.start, finding.severity)) emit({ rule: "secret-reference", ...finding, ...spanning(at, ...others) });
  };
  for (const file of text.all(CREDENTIAL_FILE)) {
    const what = quote(text.slice(file));
    const pass = text.near(file, PASS);
    const target = pass ? parameterTarget(text, pass) : undefined;
    if (pass && target !== undefined) {
      report(file, { severity: "critical", message: `Asks the model to pass the credential file ${what} through the parameter "${target.name}".` }, pass);
      continue;
    }
    const act = text.near(file, READ) ?? pass ?? text.near(file, SEND);
    if (act) report(file, { severity: "high", message: `Asks the model to read or pass on the credential file ${what}.` }, act);
    else report(file, { severity: "warn", message: `Names the credential file ${what}.` });
  }
  for (const pattern of [SECRET_FILE, SECRET_NOUN, SECRET_VARIABLE]) {
    for (const secret of text.all(pattern)) {
      const pass = text.near(secret, PASS);
      // Asking for a key in the field that describes a property is ordinary, unless the property is a side channel.
      const target = pass ? parameterTarget(text, pass) : undefined;
      const what = quote(text.slice(secret));
      if (pass && target !== undefined && (!target.own || isSideChannel(target))) {
        report(secret, { severity: "critical", message: `Asks the model to pass ${what} through the parameter "${target.name}".` }, pass);
      } else if (pattern !== SECRET_NOUN) {
        // A file or variable that holds secrets, named without asking for it: noted, as its own server may well read it.
        emit({ rule: "secret-reference", severity: "info", start: secret.start, end: secret.end, message: `Names ${what}, which usually holds secrets.` });
      }
    }
  }
}
