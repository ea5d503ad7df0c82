// Directory listings read once per verify() call and shared by every paths check, with a count of entries read.
import { type Dirent, type OpenDirOptions, opendirSync, readdirSync, statSync } from 'node:fs'
import { isMissing } from '../run/paths.js'
import { fsPath, nameOf } from './names.js'
import { BATCH, type Turns } from './turns.js'

// A directory whose st_size is larger than this is read a batch at a time, the walk's turns between batches
// (opendirSync); a smaller one in one readdirSync, which cannot be stopped but is done within a slice.
// Measured here (Node 20, 2 cores under load): 400,000 entries held the event loop 0.4–1 s in one
// readdirSync, 0.1–0.27 s in batches of 256. An empty directory costs 10–15 µs by readdirSync, twice that
// by opendirSync (whose handle alone costs more than a readdirSync), and the stat that chooses 3–6 µs: one
// system call more per directory listed, on top of readdirSync's five; the bench's walk of 6,857 small
// directories took 16–38 % longer with it. Batches are as fast as readdirSync from ~300 entries on ext4
// (12 KiB), ~3,000 on tmpfs (60 KiB). Up to 8 KiB: ~250 entries on ext4, ~400 on tmpfs (20 bytes an entry),
// ~8,000 on ZFS (one an entry), 4 ms of readdirSync at most. A file system that reports a directory as
// smaller than it is (some FUSE ones report 0) has it read in one readdirSync, as before.
const BIG_DIRECTORY = 8 * 1024

// An entry of a listing: its name as the walk spells it (names.ts), its type.
export type Entry = Pick<Dirent, 'name' | 'isDirectory' | 'isSymbolicLink'>

// A directory's entries, or null when it is not there or not a directory.
export type Listing = Entry[] | null

export class DirectoryCache {
  // directory entries actually read from the file system (cache hits are not counted)
  entriesRead = 0
  private readonly listings = new Map<string, Listing>()

  // The listing of an absolute directory path. Read synchronously (a small directory's readdirSync costs a
  // fraction of a round trip through the thread pool), and only a big directory's listing is a promise: it
  // is read between the walk's turns, and rejects with the signal's reason once the check is told to
  // stop. A listing stopped part-way is never kept, so no later check sees a truncated directory as whole.
  list(dir: string, turns: Turns): Listing | Promise<Listing> {
    const cached = this.listings.get(dir)
    if (cached !== undefined) return cached
    const at = fsPath(dir)
    try {
      if (statSync(at).size > BIG_DIRECTORY) return this.listInTurns(dir, turns)
      const entries = readdirSync(at, { withFileTypes: true })
      if (!entries.some(mayBeBytes)) return this.keep(dir, entries)
      return this.keep(dir, readdirSync(at, { withFileTypes: true, encoding: 'buffer' }).map(spelled))
    } catch (err) {
      return this.keep(dir, absent(err))
    }
  }

  private async listInTurns(dir: string, turns: Turns): Promise<Listing> {
    try {
      const entries = await readInTurns(dir, turns)
      return this.keep(dir, entries.some(mayBeBytes) ? await readInTurns(dir, turns, 'buffer') : entries)
    } catch (err) {
      return this.keep(dir, absent(err))
    }
  }

  private keep(dir: string, listing: Listing): Listing {
    this.entriesRead += listing?.length ?? 0
    this.listings.set(dir, listing)
    return listing
  }
}

// Only a directory that is not there is empty: one that cannot be read (EACCES) may hold the match, so it
// is a fault the evaluator reports as `error`, never a miss; so is one nested past the system's path
// length (ENAMETOOLONG), which exists and holds what it holds (the walk's bound); and so is a stop.
function absent(err: unknown): null {
  if (!isMissing(err) || (err as NodeJS.ErrnoException).code === 'ENAMETOOLONG') throw err
  return null
}

// A name read as a string holds U+FFFD where its bytes are not UTF-8: its directory is read again as bytes.
const mayBeBytes = (entry: Entry) => entry.name.includes('\uFFFD')

function spelled(entry: Dirent<Buffer>): Entry {
  return {
    name: nameOf(entry.name),
    isDirectory: () => entry.isDirectory(),
    isSymbolicLink: () => entry.isSymbolicLink(),
  }
}

// A directory's entries a batch at a time, looking at the stop between batches; names read as strings, or
// with 'buffer' as bytes and spelled.
async function readInTurns(dir: string, turns: Turns, encoding?: 'buffer'): Promise<Entry[]> {
  // the types know no Dir of Buffer names
  const handle = opendirSync(fsPath(dir), { bufferSize: BATCH, encoding } as OpenDirOptions)
  try {
    const entries: Entry[] = []
    for (let entry = handle.readSync(); entry; entry = handle.readSync()) {
      entries.push(encoding === 'buffer' ? spelled(entry as unknown as Dirent<Buffer>) : entry)
      if (turns.due()) {
        await turns.give()
        turns.signal.throwIfAborted()
      }
    }
    return entries
  } finally {
    handle.closeSync()
  }
}
