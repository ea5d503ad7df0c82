// preflight-trace: what a program and its children try to run and open, recorded without stopping them
// the way ptrace does (docs/attribution.md). A seccomp filter installed before the program starts hands
// the calls that look a name up or open a file — and only those — to a supervisor, which reads the path
// from the caller's memory, lets the call go on, and writes one line per call in strace's own format
// (`PID call("path", …) = 0` or `= -1 ENOENT (…)`), so the worker reads either tracer's output alike —
// but an open that found its file only with -r (`preflight learn`'s files read).
// Threads, execs, exits and signals cost nothing: nothing else is handed over.
//
//   preflight-trace -o FILE [-r] [-w WORKSPACE] [-p PATH] [-u UID -g GID] -- PROGRAM [ARG...]
//
// The process the worker started becomes PROGRAM (its pid, exit code and process group are the
// program's); the supervisor is a grandchild in a session of its own and ends when the last filtered
// process does. With -u/-g the program runs as UID:GID with no supplementary groups, and the supervisor
// stays root but reads the callers' memory and checks paths with that uid as its filesystem uid: it sees
// what the program may see, and the program can neither signal it nor read it.
//
// The outcome is the supervisor's own check of the path, made as the call goes on — not the kernel's
// return value, which a user notification never sees. A call whose memory cannot be read (a process
// made non-dumpable before its first traced call) is not recorded, and the trace's last lines count such
// calls; see docs/attribution.md for what else cannot be seen.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "preflight-trace: no seccomp architecture for this target"
#endif

#ifndef SYS_faccessat2
#define SYS_faccessat2 439
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP 1
#endif

enum kind { EXEC, OPEN, STAT, LSTAT, ACCESS };

struct call {
  int nr;
  const char *name;
  enum kind kind;
  int dirfd;  // the argument holding the directory fd, or -1
  int path;   // the argument holding the path
  int flags;  // open's flags, stat's AT_ flags or access's mode, or -1
  unsigned skip;  // a call with any of these bits in its flags is let through unseen
};

static const struct call CALLS[] = {
    {__NR_execve, "execve", EXEC, -1, 0, -1, 0},
    {__NR_execveat, "execveat", EXEC, 0, 1, -1, 0},
    {__NR_openat, "openat", OPEN, 0, 1, 2, O_CREAT},
    // fstat(): glibc asks newfstatat(fd, "", AT_EMPTY_PATH), a descriptor's, not a path's
    {__NR_newfstatat, "newfstatat", STAT, 0, 1, 3, AT_EMPTY_PATH},
    {__NR_faccessat, "faccessat", ACCESS, 0, 1, 2, 0},
#ifdef __NR_faccessat2
    {__NR_faccessat2, "faccessat2", ACCESS, 0, 1, 2, 0},
#endif
#ifdef __NR_open
    {__NR_open, "open", OPEN, -1, 0, 1, O_CREAT},
    {__NR_stat, "stat", STAT, -1, 0, -1, 0},
    {__NR_lstat, "lstat", LSTAT, -1, 0, -1, 0},
    {__NR_access, "access", ACCESS, -1, 0, 1, 0},
#endif
};
#define NCALLS (sizeof CALLS / sizeof CALLS[0])

static void die(const char *what) {
  fprintf(stderr, "preflight-trace: %s: %s\n", what, strerror(errno));
  exit(127);
}

// The filter: the calls above go to the supervisor, but those with a `skip` flag — an open that may
// create its file (a file a program makes is not one it needed; the reader drops such an open too, so
// this is only what it saves) and an fstat; every other call, and any other architecture's, goes on. A program of another architecture (32-bit
// x86 on x86_64) is not observed.
static int install_filter(void) {
  // 4 to reach the calls, at most 5 a call (those with a `skip`), 1 to end
  struct sock_filter f[4 + 5 * NCALLS + 1];
  size_t n = 0;
  f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
  f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0);
  f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  for (size_t i = 0; i < NCALLS; i++) {
    if (CALLS[i].skip == 0) {
      f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CALLS[i].nr, 0, 1);
      f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
      continue;
    }
    // nr matches: load the flags' low word and test the bits (no other call is tested after it)
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CALLS[i].nr, 0, 4);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                          offsetof(struct seccomp_data, args[CALLS[i].flags]));
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CALLS[i].skip, 1, 0);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  }
  f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  struct sock_fprog prog = {.len = (unsigned short)n, .filter = f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
  // SPEC_ALLOW: a filter is not a sandbox here, and without it a kernel that mitigates speculative store
  // bypass "for seccomp" would slow everything the agent runs (SSBD), which no untraced run pays
  int fd = (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
                        SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_SPEC_ALLOW, &prog);
  if (fd < 0) die("seccomp");
  return fd;
}

// One byte, with room for one descriptor beside it: what send_fd and recv_fd exchange.
struct fd_message {
  char byte;
  struct iovec iov;
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int))];
  } u;
  struct msghdr msg;
};

static void fd_message_init(struct fd_message *m) {
  memset(m, 0, sizeof *m);
  m->iov = (struct iovec){.iov_base = &m->byte, .iov_len = 1};
  m->msg = (struct msghdr){.msg_iov = &m->iov, .msg_iovlen = 1, .msg_control = m->u.buf, .msg_controllen = sizeof m->u.buf};
}

static void send_fd(int sock, int fd) {
  struct fd_message m;
  fd_message_init(&m);
  struct cmsghdr *c = CMSG_FIRSTHDR(&m.msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof fd);
  // MSG_NOSIGNAL: a supervisor that could not start closed its end; the program says so and exits 127
  if (sendmsg(sock, &m.msg, MSG_NOSIGNAL) != 1) die("the supervisor could not start: sendmsg");
}

static int recv_fd(int sock) {
  struct fd_message m;
  fd_message_init(&m);
  if (recvmsg(sock, &m.msg, 0) != 1) return -1;
  struct cmsghdr *c = CMSG_FIRSTHDR(&m.msg);
  if (!c || c->cmsg_type != SCM_RIGHTS) return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return fd;
}

// Each thread's /proc/TID/mem, kept open: opening it costs more than the read. A kept file reads the
// memory the thread had when it was opened, so a thread's file is dropped when it calls execve, and one
// that no longer reads (its process has ended; the tid may be another's now) is opened again once.
#define MEMS 512
static struct {
  int tid;
  int fd;
} mems[MEMS];

static void forget_mem(int tid) {
  int slot = tid % MEMS;
  if (mems[slot].tid == tid && mems[slot].fd > 0) close(mems[slot].fd);
  if (mems[slot].tid == tid) mems[slot].tid = 0;
}

static int mem_of(int tid, int fresh) {
  int slot = tid % MEMS;
  if (!fresh && mems[slot].tid == tid) return mems[slot].fd;
  if (mems[slot].tid != 0) close(mems[slot].fd);
  char file[64];
  snprintf(file, sizeof file, "/proc/%d/mem", tid);
  int fd = open(file, O_RDONLY | O_CLOEXEC);
  mems[slot].tid = fd < 0 ? 0 : tid;
  mems[slot].fd = fd;
  return fd;
}

// The NUL-terminated string at `addr` in `tid`'s memory, read page by page (a path may end just before
// an unmapped page): 1, or 0 when it is empty or longer than PATH_MAX, or -1 when the memory cannot be
// read at all (the process hid it, or has ended).
static int read_string(int tid, unsigned long long addr, char *out, size_t size) {
  for (int attempt = 0; attempt < 2; attempt++) {
    int fd = mem_of(tid, attempt);
    if (fd < 0) break;
    size_t got = 0;
    while (got < size - 1) {
      size_t room = 4096 - ((addr + got) % 4096);
      if (room > size - 1 - got) room = size - 1 - got;
      ssize_t r = pread(fd, out + got, room, (off_t)(addr + got));
      if (r <= 0) break;
      void *nul = memchr(out + got, 0, (size_t)r);
      got += (size_t)r;
      if (nul) return out[0] != 0;
    }
    if (got > 0) return 0;  // read, but too long: no path
  }
  forget_mem(tid);
  return -1;
}

// The directory a relative path is taken from: the caller's cwd, or the directory fd's.
static int read_dir(int pid, long long dirfd, char *out, size_t size) {
  char link[64];
  if (dirfd == AT_FDCWD)
    snprintf(link, sizeof link, "/proc/%d/cwd", pid);
  else
    snprintf(link, sizeof link, "/proc/%d/fd/%lld", pid, dirfd);
  ssize_t r = readlink(link, out, size - 1);
  if (r <= 0 || out[0] != '/') return 0;
  out[r] = 0;
  return 1;
}

// strace's quoting: printable ASCII as it is, `"` and `\` escaped, every other byte as \xHH.
static void put_quoted(FILE *out, const char *s) {
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(out, "\\%c", *p);
    else if (*p >= 0x20 && *p < 0x7f)
      fputc(*p, out);
    else
      fprintf(out, "\\x%02x", *p);
  }
  fputc('"', out);
}

// The program's uid and gid, with -u/-g; -1 without (the supervisor's own ids are the program's then).
static long uid = -1, gid = -1;

// Whether the program may access `path` for access(2)'s `mode`: 0, or the errno it would meet.
static int may(const char *path, int mode) {
  if (uid < 0) return faccessat(AT_FDCWD, path, mode, 0) == 0 ? 0 : errno;
  // glibc's faccessat(AT_EACCESS) falls back to the real uid (root) where faccessat2 is missing: never
  // called but directly, as the filesystem ids
  if (syscall(SYS_faccessat2, AT_FDCWD, path, mode, AT_EACCESS) == 0) return 0;
  if (errno != ENOSYS) return errno;
  // before Linux 5.8: the mode bits, for the program's uid and gid (it has no other group)
  struct stat st;
  if (stat(path, &st) != 0) return errno;
  int shift = st.st_uid == (uid_t)uid ? 6 : st.st_gid == (gid_t)gid ? 3 : 0;
  return (((st.st_mode >> shift) & 7) & (unsigned)mode) == (unsigned)mode ? 0 : EACCES;
}

// The call's outcome, checked now with the program's filesystem ids: 0, or the errno it would meet.
static int check(const struct call *c, const char *path, unsigned long long flags) {
  struct stat st;
  int r = -1;
  switch (c->kind) {
    case EXEC:
      if ((r = may(path, X_OK)) != 0) return r;
      return stat(path, &st) != 0 || !S_ISREG(st.st_mode) ? EACCES : 0;
    case ACCESS:
      return may(path, c->flags < 0 ? F_OK : (int)(flags & 7));
    case LSTAT:
      r = lstat(path, &st);
      break;
    case STAT:
      r = fstatat(AT_FDCWD, path, &st, c->flags < 0 ? 0 : (int)(flags & AT_SYMLINK_NOFOLLOW));
      break;
    case OPEN:
      r = stat(path, &st);
      if (r == 0 && (flags & O_DIRECTORY) && !S_ISDIR(st.st_mode)) return ENOTDIR;
      break;
  }
  return r == 0 ? 0 : errno;
}

// the errno names the reader tells apart; any other failure is one it ignores
static const char *errno_name(int err) {
  return err == ENOENT ? "ENOENT" : err == ENOTDIR ? "ENOTDIR" : err == EACCES ? "EACCES" : "EOTHER";
}

static const char *access_mode(unsigned long long flags) {
  switch (flags & O_ACCMODE) {
    case O_WRONLY:
      return "O_WRONLY";
    case O_RDWR:
      return "O_RDWR";
    default:
      return "O_RDONLY";
  }
}

static int reads;
// -w: the workspace, where a failed open is a need; -p: the program's PATH, where a lookup is one. The
// rest is not written (the worker's reader would drop it, at a cost), nor checked; without them, all is.
static const char *workspace;
static const char *path_entries;

// Whether the reader could keep this call: an exec always (the reader counts the wrappers' execs), an open
// under the workspace, a lookup in a PATH entry. A path with a "/." in it is kept as it is (the reader
// resolves "..").
static int wanted(const struct call *c, const char *full) {
  if (c->kind == EXEC || strstr(full, "/.")) return 1;
  if (c->kind == OPEN) {
    size_t n = workspace ? strlen(workspace) : 0;
    return !workspace || (strncmp(full, workspace, n) == 0 && (full[n] == '/' || workspace[n - 1] == '/'));
  }
  if (!path_entries) return 1;
  const char *slash = strrchr(full, '/');
  size_t dir = slash == full ? 1 : (size_t)(slash - full);
  for (const char *entry = path_entries; *entry;) {
    size_t n = strcspn(entry, ":");
    if (n == dir && strncmp(entry, full, n) == 0) return 1;
    entry += n + (entry[n] == ':');
  }
  return 0;
}
// the last line of a trace that saw every traced process end (trace.ts waits for it)
#define END "preflight-trace: every traced process has ended"
#define FLUSH_MS 20

static void supervise(int listener, FILE *out) {
  struct seccomp_notif_sizes sizes;
  if (syscall(__NR_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0) die("notif sizes");
  struct seccomp_notif *req = calloc(1, sizes.seccomp_notif);
  struct seccomp_notif_resp *resp = calloc(1, sizes.seccomp_notif_resp);
  static char path[4097], dir[4097], full[8200];
  int dirty = 0;
  unsigned long unreadable = 0;
  // the caller waits for the supervisor on each call: where the kernel can (6.6 and later), it runs the
  // supervisor on the caller's CPU at once instead of waking it on another
  ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
  for (;;) {
    struct pollfd p = {.fd = listener, .events = POLLIN};
    // written out when the buffer fills, or once no call has come for FLUSH_MS: the reader (the worker)
    // is woken a few times a run, not once a call, and still sees each call within FLUSH_MS
    int ready = poll(&p, 1, dirty ? FLUSH_MS : -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    if (ready == 0) {
      fflush(out);
      dirty = 0;
      continue;
    }
    if (!(p.revents & POLLIN)) {
      // every filtered process has ended (and been reaped): the trace is whole, and the reader need
      // not wait for it to be quiet
      if (unreadable) fprintf(out, "preflight-trace: %lu calls unreadable\n", unreadable);
      fputs(END "\n", out);
      break;
    }
    memset(req, 0, sizes.seccomp_notif);
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) != 0) {
      if (errno == EINTR || errno == ENOENT) continue;
      break;
    }
    const struct call *c = NULL;
    for (size_t i = 0; i < NCALLS; i++)
      if (CALLS[i].nr == req->data.nr) c = &CALLS[i];
    int read = c ? read_string(req->pid, req->data.args[c->path], path, sizeof path) : 0;
    int known = read > 0;
    if (known && path[0] != '/') {
      long long dirfd = c->dirfd < 0 ? AT_FDCWD : (long long)(int)req->data.args[c->dirfd];
      known = read_dir(req->pid, dirfd, dir, sizeof dir);
      if (known) snprintf(full, sizeof full, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, path);
    } else if (known)
      snprintf(full, sizeof full, "%s", path);
    // what was read is the caller's only if it is still the same call of the same process
    // (and a kept /proc/TID/mem of a tid that has ended is not used again)
    int valid = ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) == 0;
    if (!valid) forget_mem(req->pid);
    known = known && valid;
    // memory that could not be read while its process was there: a call the record does not have
    if (read < 0 && valid) unreadable++;
    unsigned long long flags = c && c->flags >= 0 ? req->data.args[c->flags] : 0;
    int pid = req->pid;
    memset(resp, 0, sizes.seccomp_notif_resp);
    resp->id = req->id;
    resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
    if (c && c->kind == EXEC) forget_mem(pid);
    if (!known || !wanted(c, full)) continue;
    int err = check(c, full, flags);
    // an open that found its file is a need only to `preflight learn` (-r)
    if (c->kind == OPEN && err == 0 && !reads) continue;
    dirty = 1;
    fprintf(out, "%d %s(", pid, c->name);
    if (c->dirfd >= 0) fputs("AT_FDCWD</>, ", out);
    put_quoted(out, full);
    if (c->kind == OPEN)
      fprintf(out, ", %s%s%s", access_mode(flags), flags & O_DIRECTORY ? "|O_DIRECTORY" : "",
              flags & O_CREAT ? "|O_CREAT" : "");
    if (err)
      fprintf(out, ") = -1 %s (%s)\n", errno_name(err), strerror(err));
    else
      fputs(") = 0\n", out);
  }
  fflush(out);
}

// The supervisor's filesystem ids become the program's, and it keeps no supplementary group; 0 when the
// kernel did not take them (setfsuid says nothing of a refusal: it returns the previous id either way).
static int as_filesystem_ids(uid_t uid, gid_t gid) {
  if (setgroups(0, NULL) != 0) return 0;
  setfsgid(gid);
  setfsuid(uid);
  return (gid_t)setfsgid((gid_t)-1) == gid && (uid_t)setfsuid((uid_t)-1) == uid;
}

static long number(const char *s) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  // not 0 (the program would keep root's power over files the checks would not see) nor past a uid_t
  if (errno || *end || v <= 0 || v >= (long)UINT32_MAX) {
    fprintf(stderr, "preflight-trace: not a uid or gid: %s\n", s);
    exit(127);
  }
  return v;
}

// The supervisor, with -u: no capability left (it keeps uid 0, which no program of the agent's uid may
// signal, but nothing root may do: a path is checked, and the caller's memory read, only as the
// program could), and not dumpable.
static int drop_capabilities(void) {
  struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct none[2];
  memset(none, 0, sizeof none);
  return syscall(SYS_capset, &header, none) == 0 && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0;
}

int main(int argc, char **argv) {
  const char *file = NULL;
  int i = 1;
  for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
    if (strcmp(argv[i], "-r") == 0) {
      reads = 1;
      continue;
    }
    if (i + 1 >= argc) break;
    if (strcmp(argv[i], "-o") == 0)
      file = argv[++i];
    else if (strcmp(argv[i], "-w") == 0)
      workspace = argv[++i];
    else if (strcmp(argv[i], "-p") == 0)
      path_entries = argv[++i];
    else if (strcmp(argv[i], "-u") == 0)
      uid = number(argv[++i]);
    else if (strcmp(argv[i], "-g") == 0)
      gid = number(argv[++i]);
    else
      break;
  }
  if (!file || i >= argc || strcmp(argv[i], "--") != 0 || i + 1 >= argc || (uid < 0) != (gid < 0)) {
    fprintf(stderr, "usage: preflight-trace -o FILE [-r] [-w WORKSPACE] [-p PATH] [-u UID -g GID] -- PROGRAM [ARG...]\n");
    return 127;
  }
  char **program = argv + i + 1;

  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) die("socketpair");
  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    // the supervisor: a grandchild, in a session of its own, holding nothing of the program's
    close(sv[0]);
    if (fork() != 0) _exit(0);
    setsid();
    signal(SIGPIPE, SIG_IGN);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, 0);
      dup2(null, 1);
      dup2(null, 2);
      if (null > 2) close(null);
    }
    FILE *out = fopen(file, "we");
    if (out && uid >= 0 && !(as_filesystem_ids((uid_t)uid, (gid_t)gid) && drop_capabilities())) {
      fclose(out);
      out = NULL;
    }
    int listener = out ? recv_fd(sv[1]) : -1;
    // the program goes on once the supervisor holds the listener, or ends if it never will
    char ok = listener >= 0 ? 1 : 0;
    if (write(sv[1], &ok, 1) != 1 || !ok) _exit(1);
    close(sv[1]);
    // a FIFO's reader (the worker) may be slow to be scheduled: while it is, a full pipe would hold the
    // supervisor, and every traced call with it. 1 MiB lets it fall that far behind first.
    fcntl(fileno(out), F_SETPIPE_SZ, 1 << 20);
    static char buf[1 << 16];
    setvbuf(out, buf, _IOFBF, sizeof buf);
    supervise(listener, out);
    _exit(0);
  }
  close(sv[1]);
  int status;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (uid >= 0) {
    if (setgroups(0, NULL) != 0) die("setgroups");
    if (setresgid((gid_t)gid, (gid_t)gid, (gid_t)gid) != 0) die("setresgid");
    if (setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) != 0) die("setresuid");
  }
  int listener = install_filter();
  send_fd(sv[0], listener);
  close(listener);
  char ok = 0;
  if (read(sv[0], &ok, 1) != 1 || !ok) {
    fprintf(stderr, "preflight-trace: the supervisor could not start (cannot write %s)\n", file);
    return 127;
  }
  close(sv[0]);
  // the uid switch left this process non-dumpable, and the supervisor could not read its exec's path;
  // it holds nothing now (the listener is closed) that the program's own uid may not see
  if (uid >= 0 && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) die("dumpable");
  execvp(program[0], program);
  fprintf(stderr, "preflight-trace: %s: %s\n", program[0], strerror(errno));
  return errno == ENOENT ? 127 : 126;
}
