import { describe, expect, it } from "vitest";
import { SECRET_PATTERNS, maskUrl, redactSecrets } from "./mask";

describe("maskUrl", () => {
  it("masks credentials and secret query parameters, keeping the rest readable", () => {
    expect(maskUrl("https://user:pa55@x.dev/mcp?apikey=s3cr3t&v=1&Token=abc&sig=z&api_key=k&access_token=a&key=b&secret=c&password=d")).toBe(
      "https://***:***@x.dev/mcp?apikey=***&v=1&Token=***&sig=***&api_key=***&access_token=***&key=***&secret=***&password=***",
    );
    expect(maskUrl("http://localhost:3000/mcp?page=2")).toBe("http://localhost:3000/mcp?page=2");
  });
});

describe("redactSecrets", () => {
  it("masks URLs, key=value pairs, secret flags and bearer credentials inside text", () => {
    const text =
      "cannot reach https://x.dev/mcp?api_key=SECRET1. token=SECRET2&x=1 --api-key SECRET3 --token=SECRET4 Authorization: Bearer SECRET5abc, http://a:SECRET6@h/p";
    const masked = redactSecrets(text);
    for (let i = 1; i <= 6; i++) expect(masked).not.toContain(`SECRET${i}`);
    expect(masked).toBe("cannot reach https://x.dev/mcp?api_key=***. token=***&x=1 --api-key *** --token=*** Authorization: Bearer ***, http://***:***@h/p");
    expect(redactSecrets("npx -y @modelcontextprotocol/server-filesystem /tmp")).toBe("npx -y @modelcontextprotocol/server-filesystem /tmp");
    expect(redactSecrets("npx -y server-github ghp_0123456789abcdefghijABCDEFGHIJ")).toBe("npx -y server-github ***");
  });
});

describe("SECRET_PATTERNS in log lines", () => {
  it("masks a JWT, a private key and a password assignment in what codemux writes, keeping what says where", () => {
    const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlMTIz";
    expect(redactSecrets(`token ${jwt} refused`)).toBe("token *** refused");
    expect(redactSecrets("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- loaded")).toBe("*** loaded");
    expect(redactSecrets('config: password: "hunter22" at line 3')).toBe('config: password: "***" at line 3');
  });

  it("has each group at the end of its match, which is how a group is masked", () => {
    for (const pattern of SECRET_PATTERNS.filter((p) => p.group !== undefined)) expect(pattern.regex.source.endsWith(")")).toBe(true);
  });
});
