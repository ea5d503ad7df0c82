import { spawn, spawnSync } from 'node:child_process'
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmdirSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { gnuRm, removeAgentTrees, removeTrees } from '../../../worker/run/remove.js'
import { testDir, write } from '../../support/checks.js'
import { waitFor } from '../../support/wait.js'

const isRoot = process.getuid?.() === 0

// A tree `depth` directories deep, made by one process walking down (its path passes PATH_MAX).
function deepTree(top: string, depth: number): void {
  const made = spawnSync(
    process.execPath,
    [
      '-e',
      `const fs = require('fs'); for (let i = 0; i < ${depth}; i++) { fs.mkdirSync('d'); process.chdir('d') }`,
    ],
    { cwd: top },
  )
  expect(made.status).toBe(0)
}

describe('gnuRm', () => {
  it('is GNU coreutils at a fixed path, not one from PATH', () => {
    expect(gnuRm()).toMatch(/^\/(usr\/)?bin\/rm$/)
  })
})

describe('removeTrees', () => {
  it('removes each tree and is content with one that is not there', async () => {
    const top = testDir()
    write(top, 'a/b/c.txt')
    write(top, 'a/d.txt')
    await removeTrees([join(top, 'a'), join(top, 'absent')])
    expect(readdirSync(top)).toEqual([])
  })

  it('removes a link inside, never what it points at', async () => {
    const outside = testDir()
    const secret = write(outside, 'keep/secret')
    const top = testDir()
    symlinkSync(join(outside, 'keep'), join(top, 'dir-link'))
    symlinkSync(secret, join(top, 'file-link'))
    await removeTrees([top])
    expect(existsSync(top)).toBe(false)
    expect(existsSync(secret)).toBe(true)
  })

  // fs.rm goes by paths and fails with ENAMETOOLONG; setup can leave such a tree behind on purpose
  it('removes a tree deeper than PATH_MAX, which fs.rm cannot', async () => {
    const top = testDir()
    deepTree(top, 2_500)
    await expect(rm(join(top, 'd'), { recursive: true, force: true })).rejects.toThrow()
    await removeTrees([join(top, 'd')])
    expect(readdirSync(top)).toEqual([])
  })

  it('fails, saying so, when something cannot be removed (a mount inside)', async () => {
    if (!isRoot) return
    const top = testDir()
    mkdirSync(join(top, 'mnt'))
    expect(spawnSync('mount', ['-t', 'tmpfs', 'none', join(top, 'mnt')]).status).toBe(0)
    try {
      await expect(removeTrees([top])).rejects.toThrow(/rm exited 1: .*mnt/)
      await expect(removeAgentTrees([top], { uid: 62_101, gid: 62_101 })).rejects.toThrow(/again/)
    } finally {
      spawnSync('umount', [join(top, 'mnt')])
    }
  })
})

// The attack of a second slot: its uid swaps the directories of a tree the first slot's agent opened to
// it (0777) for links to a root-only directory, in a tight loop, while root removes the tree.
describe.runIf(isRoot)('removing a tree while another uid swaps its directories for links', () => {
  const owner = { uid: 62_110, gid: 62_110 }
  const attacker = { uid: 62_111, gid: 62_111 }

  it('deletes nothing the links point at', async () => {
    const vault = testDir()
    const kept = Array.from({ length: 6 }, (_, i) => write(vault, `secret-${i}`))
    const top = testDir()
    chmodSync(top, 0o755)
    mkdirSync(join(top, 'outbox'), { mode: 0o777 })
    chmodSync(join(top, 'outbox'), 0o777)
    const tree = join(top, 'tree')
    const ready = join(top, 'outbox', 'racing')
    // the racer: groups of directories renamed away with a link to the vault in their place, then put
    // back, over and over (≤ 10 s): a walk by paths that saw a directory may open a link a moment later
    const racer = spawn('perl', ['-e', RACER, tree, vault, ready], { ...attacker, stdio: 'ignore' })
    try {
      await waitFor(() => existsSync(ready), { what: 'the racer to start' })
      // rounds of a fresh tree removed while it races (each removal may fail: the racer adds entries)
      const until = Date.now() + 4_000
      while (Date.now() < until && kept.every(existsSync)) {
        if (!existsSync(tree)) openTree(tree, owner)
        await removeTrees([tree]).catch(() => {})
      }
    } finally {
      racer.kill('SIGKILL')
    }
    for (const file of kept) expect(existsSync(file)).toBe(true)
    await removeTrees([tree])
    expect(existsSync(tree)).toBe(false)
  }, 30_000)
})

// 300 directories of three files each, the owner's, in a tree every uid may write (an agent's 0777):
// made in a closed directory beside it (the racer must not steer the test's own writes), then moved in
function openTree(tree: string, owner: { uid: number; gid: number }): void {
  const stage = mkdtempSync(`${tree}-stage-`)
  const made = join(stage, 'tree')
  mkdirSync(made)
  for (let i = 0; i < 300; i++) {
    const dir = join(made, `d${i}`)
    mkdirSync(dir)
    for (let f = 0; f < 3; f++) writeFileSync(join(dir, `f${f}`), 'x')
    chownSync(dir, owner.uid, owner.gid)
  }
  chmodSync(made, 0o777)
  renameSync(made, tree)
  rmdirSync(stage)
}

// in perl (Debian's perl-base is always there, for every uid; the Node running the tests may not be)
const RACER = `my ($tree, $vault, $ready) = @ARGV; my $until = time + 10;
open(my $f, '>', $ready) or die; close $f;
while (time < $until) {
  for (my $at = 0; $at < 300; $at += 50) {
    for my $i ($at .. $at + 49) { rename("$tree/d$i", "$tree/h$i") and symlink($vault, "$tree/d$i") }
    for my $i ($at .. $at + 49) { unlink("$tree/d$i") and rename("$tree/h$i", "$tree/d$i") }
  }
}`

describe.runIf(isRoot)('removeAgentTrees', () => {
  const who = { uid: 62_120, gid: 62_120 }

  it('removes a tree the agent made unwritable to itself (0500 directories)', async () => {
    const top = testDir()
    chmodSync(top, 0o755)
    const tree = join(top, 'ws')
    mkdirSync(tree)
    chownSync(tree, who.uid, who.gid)
    const made = spawnSync('sh', ['-c', 'mkdir -p a/b && touch a/b/f && chmod 0500 a/b a'], {
      cwd: tree,
      ...who,
    })
    expect(made.status).toBe(0)
    await removeAgentTrees([tree], who)
    expect(existsSync(tree)).toBe(false)
  })
})
