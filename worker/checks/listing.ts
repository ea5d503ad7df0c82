// Directory listings read once per verify() call and shared by every paths check, with a count of entries read.
import { type Dirent, readdirSync } from 'node:fs'
import { isMissing } from '../run/paths.js'

export class DirectoryCache {
  // directory entries actually read from the file system (cache hits are not counted)
  entriesRead = 0
  private readonly listings = new Map<string, Dirent[] | null>()

  // The entries of an absolute directory path; null when it is not there or not a directory.
  // Synchronous on purpose: a readdirSync of a small directory costs a fraction of a promise round trip
  // through the thread pool, and the walk yields to the event loop every few milliseconds.
  list(dir: string): Dirent[] | null {
    const cached = this.listings.get(dir)
    if (cached !== undefined) return cached
    let entries: Dirent[] | null
    try {
      entries = readdirSync(dir, { withFileTypes: true })
      this.entriesRead += entries.length
    } catch (err) {
      // only a directory that is not there is empty: one that cannot be read (EACCES) may hold the match,
      // so it is a fault the evaluator reports as `error`, never a miss; so is one nested past the
      // system's path length (ENAMETOOLONG), which exists and holds what it holds (the walk's bound)
      if (!isMissing(err) || (err as NodeJS.ErrnoException).code === 'ENAMETOOLONG') throw err
      entries = null
    }
    this.listings.set(dir, entries)
    return entries
  }
}
