import { COMMAND_SPECS, type TCommandSpec } from './command-specs.js';

// `--help` is for people: plain text on stdout and exit 0. Commands keep the contract's one JSON object.

const RUN = 'npm run -s admin --';

function table(rows: [string, string][]): string {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`).join('\n');
}

function synopsis(spec: TCommandSpec): string {
  const options = spec.options.map((o) =>
    o.required ? `--${o.name} ${o.value}` : `[--${o.name} ${o.value}]`,
  );
  return `${RUN} ${spec.name} ${options.join(' ')}`;
}

export function cliHelp(): string {
  return `Usage: ${RUN} <command> [options]

The operator's CLI of the social post service. A command prints exactly one JSON object on stdout; an error is
one JSON object {"error": "..."} on stderr with exit code 1 (2 for a mistake in the command line).

Commands:
${table(COMMAND_SPECS.map((c) => [c.name, c.summary]))}

Help for one command: ${RUN} <command> --help   (e.g. ${RUN} key create --help)

Environment: DATABASE_URL, REDIS_URL or REDIS_CLUSTER_NODES, QUEUE_PREFIX, ENCRYPTION_KEY (the API's; see the README, Configuration).
`;
}

export function commandHelp(spec: TCommandSpec): string {
  const options = table([
    ...spec.options.map((o): [string, string] => [
      `--${o.name} ${o.value}`,
      `${o.help}${o.required ? ' (required)' : ''}`,
    ]),
    ['--help', 'this text'],
  ]);
  return `Usage: ${synopsis(spec)}

${spec.summary}.${spec.notes ? ` ${spec.notes}` : ''}

Options:
${options}

Prints: ${spec.prints}
`;
}

/** The commands of one group (`admin account --help`). */
export function groupHelp(group: string): string | null {
  const specs = COMMAND_SPECS.filter((c) => c.name.startsWith(`${group} `));
  if (specs.length === 0) return null;
  return `Usage: ${RUN} ${group} <${specs.map((c) => c.name.slice(group.length + 1)).join('|')}> [options]

${table(specs.map((c) => [c.name, c.summary]))}

Help for one command: ${RUN} ${specs[0]?.name} --help
`;
}
