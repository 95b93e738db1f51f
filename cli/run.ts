/** Runs one kubectl-bind command line; returns the exit code. Errors end here, printed as what failed and what to do. */
import { apiServiceCommand } from './commands/apiservice';
import { bindCommand } from './commands/bind';
import { listCommand } from './commands/list';
import { removeCommand } from './commands/remove';
import { whyCommand } from './commands/why';
import { complete } from './completion';
import { CliError, ExitCode } from './errors';
import { messageOf } from '../lib/kube-errors';
import { parseCommand } from './flags';
import { HELP } from './help';
import type { Io } from './io';
import { printable } from './table';
import { versionText } from './version';

const LINES = { lines: true } as const;

export async function run(argv: readonly string[], io: Io): Promise<number> {
  try {
    const c = parseCommand(argv, io.env);
    switch (c.command) {
      case 'help': {
        const text = HELP[c.topic];
        if (text === undefined) throw new CliError(`no command "${c.topic}"`, 'kubectl bind --help lists the commands', ExitCode.Usage);
        (c.ok ? io.stdout : io.stderr).write(text);
        return c.ok ? ExitCode.Ok : ExitCode.Usage;
      }
      case 'version':
        io.stdout.write(versionText(c.output));
        return ExitCode.Ok;
      case 'complete':
        io.stdout.write(complete(c.words));
        return ExitCode.Ok;
      case 'bind':
        return await bindCommand(c.flags, io);
      case 'apiservice':
        return await apiServiceCommand(c.flags, io);
      case 'list':
        return await listCommand(c.flags, io);
      case 'remove':
        return await removeCommand(c.flags, io);
      case 'why':
        return await whyCommand(c.flags, io);
    }
  } catch (e) {
    if (e instanceof CliError) {
      // Errors carry the other side's words (an API server's Status, a provider's terminalMessage): printed as text.
      io.stderr.write(`error: ${printable(e.message, LINES)}\n${e.hint ? `  ${printable(e.hint, LINES)}\n` : ''}`);
      return e.exitCode;
    }
    io.stderr.write(`error: ${printable(messageOf(e), LINES)}\n  this is a bug in kubectl-bind; please report it with the command line\n`);
    if (io.env.KUBECTL_BIND_DEBUG) io.stderr.write(`${(e as Error).stack}\n`);
    return ExitCode.Failed;
  }
}
