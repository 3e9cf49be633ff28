/**
 * Parses `--name value` / `--name=value` flags, and value-less `switches` (`--password-stdin`,
 * set to 'true'); returns an error sentence for anything else.
 */
export function parseFlags(args: string[], allowed: readonly string[], switches: readonly string[] = []): Record<string, string> | string {
  const flags: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) return `unexpected argument "${arg}"`;
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    if (switches.includes(name)) {
      if (eq >= 0) return `option --${name} takes no value`;
      flags[name] = 'true';
      continue;
    }
    if (!allowed.includes(name)) return `unknown option --${name}`;
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else value = args[++i];
    if (value === undefined || value.startsWith('--')) return `option --${name} needs a value`;
    flags[name] = value;
  }
  return flags;
}
