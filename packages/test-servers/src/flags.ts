/** Reads `--flag VALUE` pairs from a test server's command line: the value after the flag, or undefined. */
export function flagReader(argv: string[]): (flag: string) => string | undefined {
  return (flag) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
}
