// Path facts every part of the worker shares: containment of real paths, and errors that mean "not there".

// Whether `path` is `root` or below it. Both must be real paths (symlinks resolved) for the answer to
// mean anything: `/root-evil` is not inside `/root`, and `/` holds everything.
export function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root === '/' ? '/' : `${root}/`)
}

// A PATH entry or path that is not there, or runs through a file or a link loop: nothing to find.
export function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP' || code === 'ENAMETOOLONG'
}
