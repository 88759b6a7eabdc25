import { describe, expect, it } from "vitest";
import { browserCommand } from "./browser";

// What a hostile OAuth metadata document can put in an authorization URL: each of these means something to cmd.exe.
const hostile = 'https://auth.example.com/authorize?client_id=a&redirect=x|calc^.exe&state="q"&p=%PATH%';

describe("browserCommand", () => {
  it.each([
    ["win32", "rundll32.exe", ["url.dll,FileProtocolHandler"]],
    ["darwin", "open", []],
    ["linux", "xdg-open", []],
    ["freebsd", "xdg-open", []],
  ] as const)("on %s runs %s with the URL as one argument, never through a shell", (platform, command, before) => {
    const opener = browserCommand(hostile, platform);
    expect(opener).toEqual({ command, args: [...before, new URL(hostile).href] });
    const url = opener?.args.at(-1) as string;
    for (const special of ["&", "|", "^", "%"]) expect(url).toContain(special);
    expect(url).not.toContain('"');
    expect(opener?.command).not.toMatch(/^cmd/i);
  });

  it.each(["file:///etc/passwd", "javascript:alert(1)", "ms-settings:privacy", "calc.exe", "\\\\host\\share\\x.exe"])(
    "opens nothing but a web page: %s",
    (url) => {
      for (const platform of ["win32", "darwin", "linux"] as const) expect(browserCommand(url, platform)).toBeUndefined();
    },
  );
});
