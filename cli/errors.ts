/**
 * How kubectl-bind fails: one error type that carries what failed, what to do about it, and the exit code, so every
 * command ends the same way (`main.ts` prints `error: <what failed>` and `  <what to do>` on stderr).
 */

/** Exit codes, documented in `--help` and docs/kubectl-bind.md. */
export const ExitCode = {
  Ok: 0,
  /** Something failed: the provider, the app cluster, a document. */
  Failed: 1,
  /** Wrong command line: unknown flag, missing argument. */
  Usage: 2,
  /** Waited too long: the login, the export request, the binding, the removal. */
  Timeout: 3,
  /** The user said no: a required permission claim rejected, a removal not confirmed. */
  Declined: 4,
  /** Interrupted (Ctrl-C). */
  Interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export class CliError extends Error {
  constructor(
    /** What failed, naming the object or document. */
    message: string,
    /** What the user can do about it. */
    readonly hint?: string,
    readonly exitCode: ExitCode = ExitCode.Failed,
    /** What it failed on (`cause`), kept for the log and for callers that look beneath the message. */
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A wrong command line (exit 2), pointing at the command's --help. */
export function usageError(message: string, command: string): CliError {
  return new CliError(message, `run \`kubectl bind${command ? ` ${command}` : ''} --help\` for the usage`, ExitCode.Usage);
}

export class TimeoutError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, hint, ExitCode.Timeout);
  }
}
