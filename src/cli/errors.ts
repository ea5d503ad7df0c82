// Errors in a command's arguments or input files: printed as one sentence, exit code 2.
export class UsageError extends Error {
  override name = 'UsageError'
}
