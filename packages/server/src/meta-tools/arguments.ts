import { BadRequestError } from "../errors";

type Args = Record<string, unknown>;

/** Small readers for meta-tool arguments: a clear sentence for each wrong one. */
export function stringArg(args: Args, name: string, options: { required: true }): string;
export function stringArg(args: Args, name: string, options?: { required?: false }): string | undefined;
export function stringArg(args: Args, name: string, options: { required?: boolean } = {}): string | undefined {
  const value = args[name];
  if (value === undefined || value === null) {
    if (options.required) throw new BadRequestError(`"${name}" is required.`);
    return undefined;
  }
  if (typeof value !== "string") throw new BadRequestError(`"${name}" must be a string, not ${typeof value}.`);
  return value;
}

export function integerArg(args: Args, name: string, fallback: number, min: number, max: number): number {
  const value = args[name];
  if (value === undefined || value === null) return fallback;
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  if (typeof n !== "number" || !Number.isInteger(n)) throw new BadRequestError(`"${name}" must be an integer.`);
  if (n < min || n > max) throw new BadRequestError(`"${name}" must be between ${min} and ${max}.`);
  return n;
}

export function enumArg<T extends string>(args: Args, name: string, values: readonly T[], fallback: T): T {
  const value = args[name] ?? fallback;
  if (!values.includes(value as T)) throw new BadRequestError(`"${name}" must be one of ${values.map((v) => `"${v}"`).join(", ")}.`);
  return value as T;
}
