export interface ReadmeBlock {
  kind: "example" | "output";
  file: string;
  installs: string[];
  lang: string;
  code: string;
}
export declare function readmeBlocks(packageDir: string): ReadmeBlock[];
/** The README's example block for `file`, the file's text, and the README's block of its printed output if any. */
export declare function readmeExample(packageDir: string, file: string): { readme: string; file: string; output: string | undefined };
