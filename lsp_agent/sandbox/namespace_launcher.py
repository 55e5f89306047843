"""Starts a command inside new mount, network, PID, IPC and UTS namespaces with the workspace view mounted over the
workspace's own path and every other mount read-only; run as `python -I -S this_file OPTIONS -- ARGV...`.

Standalone on purpose (stdlib only, imports nothing from lsp_agent): it runs before the sandboxed program and
must start fast, so it imports neither json nor signal (re and enum cost tens of ms). The host side
(lsp_agent.sandbox.namespace) writes the OPTIONS: --newroot DIR --workspace DIR --cwd DIR --userns 0|1, then
--mount KIND SOURCE TARGET DATA, --writable PATH and --delete REL, each as often as needed. Steps, in the forked PID 1 of
the new PID namespace: rbind / at a new root, mount the private /tmp and home, the workspace view (overlayfs or a
bind of a copy), a minimal /dev, an empty /run and a fresh /proc; pivot into it; remount every mount read-only
except the writable set, then verify that from /proc/self/mountinfo; bring up loopback; apply deletions; drop every
capability (bounding set too) and set no_new_privs; exec the program. Any failure exits 125 before the program runs.
"""

import _signal
import ctypes
import fcntl
import os
import struct
import sys

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x20000, 0x4000000, 0x8000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
ST_TO_MS = {1: MS_RDONLY, 2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC, 1024: MS_NOATIME, 2048: MS_NODIRATIME}
ST_RELATIME = 4096
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_SECUREBITS = 1, 24, 28
PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 38, 47, 4
SECBITS_LOCKED_NOROOT = 0x3F  # NOROOT, NO_SETUID_FIXUP, KEEP_CAPS and their locks
SIGKILL, SIGPIPE, SIGXFSZ = 9, 13, 25
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "arm64": 41}
DEV_NODES = ("null", "zero", "full", "random", "urandom", "tty")
DEV_LINKS = {
    "fd": "/proc/self/fd",
    "stdin": "/proc/self/fd/0",
    "stdout": "/proc/self/fd/1",
    "stderr": "/proc/self/fd/2",
    "ptmx": "pts/ptmx",
}
MOUNT_FAILED = "lsp-agent-sandbox: overlay mount failed"
SETUP_FAILED = "lsp-agent-sandbox: setup failed"

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


def _check(result, what):
    """Raise OSError with errno when a libc call returned -1."""
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _b(text):
    return None if text is None else os.fsencode(text)


def mount(source, target, fstype, flags, data=None):
    """mount(2)."""
    _check(libc.mount(_b(source), _b(target), _b(fstype), flags, _b(data)), f"mount {target}")


def prctl(option, arg2=0, arg3=0):
    """prctl(2)."""
    _check(libc.prctl(option, arg2, arg3, 0, 0), f"prctl {option}")


def enter_namespaces(userns):
    """unshare(2) the namespaces; as non-root also a user namespace mapping us to its root."""
    flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
    uid, gid = os.geteuid(), os.getegid()
    _check(libc.unshare(flags | (CLONE_NEWUSER if userns else 0)), "unshare")
    if userns:
        for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)


def build_root(cfg):
    """Mount the new root's tree at cfg['newroot'] (paths on the host are still reachable here)."""
    new = cfg["newroot"]
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("/", new, None, MS_BIND | MS_REC)
    for step in sorted(cfg["mounts"], key=lambda s: s["target"].count("/")):
        target = new + step["target"]
        if not os.path.lexists(target):
            os.makedirs(target)  # only inside a private /tmp, home or view, which the host side checked
        kind = step["kind"]
        if kind == "bind":
            mount(step["source"], target, None, MS_BIND | MS_REC)
        elif kind == "overlay":
            try:
                mount("lsp-agent-sandbox", target, "overlay", MS_NOSUID | MS_NODEV, step["options"])
            except OSError as exc:
                sys.stderr.write(f"{MOUNT_FAILED}: {exc}\n")
                os._exit(125)
        elif kind == "tmpfs":
            mount(
                "tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=" + (step["options"] or "1m")
            )
    for covered in ("/dev", "/proc"):  # the host's, about to be replaced: detach rather than cover
        libc.umount2(_b(new + covered), MNT_DETACH)
    build_dev(new + "/dev")
    mount("proc", new + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)


def build_dev(dev):
    """A minimal /dev: the harmless character devices, the usual links, a private shm and pts."""
    mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755,size=64k")
    for name in DEV_NODES:
        open(f"{dev}/{name}", "w").close()
        mount(f"/dev/{name}", f"{dev}/{name}", None, MS_BIND)
    for name, target in DEV_LINKS.items():
        os.symlink(target, f"{dev}/{name}")
    os.mkdir(f"{dev}/shm")
    mount("tmpfs", f"{dev}/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m")
    os.mkdir(f"{dev}/pts")
    try:
        mount("devpts", f"{dev}/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620")
    except OSError:
        pass  # no pseudo-terminals; everything else works


def pivot(new):
    """Make `new` the root and detach the old one, so no path leads back to the host's tree."""
    os.chdir(new)
    number = SYS_PIVOT_ROOT.get(os.uname().machine)
    if number is None:
        raise OSError(0, f"pivot_root: unknown syscall number for {os.uname().machine}")
    _check(libc.syscall(number, b".", b"."), "pivot_root")
    _check(libc.umount2(b".", MNT_DETACH), "umount old root")
    os.chdir("/")


def mount_points():
    """Mount points from /proc/self/mountinfo in mount order (later ones cover earlier ones at the same path)."""
    points = []
    with open("/proc/self/mountinfo", "rb") as f:
        for line in f:
            field = line.split(b" ")[4]
            points.append(os.fsdecode(_unescape(field)))
    return points


def _unescape(field):
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    out, i = bytearray(), 0
    while i < len(field):
        if field[i : i + 1] == b"\\" and field[i + 1 : i + 4].isdigit():
            out.append(int(field[i + 1 : i + 4], 8))
            i += 4
        else:
            out += field[i : i + 1]
            i += 1
    return bytes(out)


def lock_down(writable, devices):
    """Remount every mount read-only, nosuid and (but the device nodes) nodev; `writable` stays writable."""
    for point in dict.fromkeys(mount_points()):
        try:
            kept = os.statvfs(point).f_flag
        except OSError:
            continue  # covered by another mount: not reachable
        flags = MS_REMOUNT | MS_BIND | MS_NOSUID
        flags |= sum(ms for st, ms in ST_TO_MS.items() if kept & st) | (
            MS_RELATIME if kept & ST_RELATIME else 0
        )
        flags = flags & ~MS_RDONLY if point in writable else flags | MS_RDONLY
        flags = flags & ~MS_NODEV if point in devices else flags | MS_NODEV
        try:
            mount(None, point, None, flags)
        except OSError as exc:
            if exc.errno not in (22, 2):  # EINVAL/ENOENT: the path is not the top of a mount (covered)
                raise
    verify(writable)


def verify(writable):
    """Fail closed unless every visible mount outside `writable` is read-only."""
    top = {}
    with open("/proc/self/mountinfo", "rb") as f:
        for line in f:
            fields = line.split(b" ")
            top[os.fsdecode(_unescape(fields[4]))] = fields[5].split(b",")
    for point, options in top.items():
        if point not in writable and b"ro" not in options:
            raise OSError(0, f"{point} is still writable")


def loopback_up():
    """Bring up `lo` in the new network namespace (localhost works, nothing else is reachable)."""
    fd = libc.socket(2, 2, 0)  # AF_INET, SOCK_DGRAM (through libc: the socket module is slow to import)
    if fd < 0:
        _check(-1, "socket")
    try:
        request = struct.pack("16sh14x", b"lo", 0)
        flags = struct.unpack("16sh14x", fcntl.ioctl(fd, 0x8913, request))[1]  # SIOCGIFFLAGS
        fcntl.ioctl(fd, 0x8914, struct.pack("16sh14x", b"lo", flags | 1))  # SIOCSIFFLAGS, IFF_UP
    finally:
        os.close(fd)


def drop_privileges():
    """No capabilities in any set (bounding set too), root gains none on exec, no_new_privs."""
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    try:
        prctl(PR_SET_SECUREBITS, SECBITS_LOCKED_NOROOT)
    except OSError:
        pass  # older kernels: the empty bounding set below already keeps exec from granting capabilities
    for cap in range(last + 1):
        prctl(PR_CAPBSET_DROP, cap)
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    header = struct.pack("Ii", 0x20080522, 0)
    data = ctypes.create_string_buffer(24)  # two zeroed {effective, permitted, inheritable}
    _check(libc.capset(ctypes.c_char_p(header), data), "capset")
    prctl(PR_SET_NO_NEW_PRIVS, 1)


def delete_paths(workspace, relatives):
    """Remove the files the agent deleted from the view (after lock_down: a planted symlink reaches nothing)."""
    for rel in relatives:
        try:
            os.unlink(os.path.join(workspace, rel))
        except OSError:
            pass


def child(cfg, argv):
    """PID 1 of the new namespace: set up, lock down, exec."""
    prctl(PR_SET_PDEATHSIG, SIGKILL)
    try:
        build_root(cfg)
        pivot(cfg["newroot"])
        lock_down(set(cfg["writable"]), {"/dev/" + n for n in DEV_NODES})
        loopback_up()
        delete_paths(cfg["workspace"], cfg["deletions"])
        os.chdir(cfg["cwd"])
        drop_privileges()
    except Exception as exc:  # noqa: BLE001 - any failure must stop before the program runs
        sys.stderr.write(f"{SETUP_FAILED}: {exc}\n")
        os._exit(125)
    for sig in (SIGPIPE, SIGXFSZ):  # Python ignores these; an exec'd program must not inherit that
        _signal.signal(sig, _signal.SIG_DFL)
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        sys.stderr.write(f"{argv[0]}: {exc.strerror}\n")
        os._exit(127 if exc.errno == 2 else 126)


def wait_for(pid):
    """Wait for the namespace's PID 1 and leave the way it did: same exit status, or the same signal."""
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except ChildProcessError:
            os._exit(1)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        _signal.signal(sig, _signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(status))


def parse(args):
    """(config, argv) from `OPTIONS -- ARGV...`; ValueError on anything else."""
    cfg = {"mounts": [], "writable": [], "deletions": [], "userns": False}
    single = {"--newroot": "newroot", "--workspace": "workspace", "--cwd": "cwd"}
    i = 0
    while i < len(args) and args[i] != "--":
        key = args[i]
        if key == "--mount" and i + 4 < len(args):
            kind, source, target, data = args[i + 1 : i + 5]
            cfg["mounts"].append({"kind": kind, "source": source, "target": target, "options": data})
            i += 5
        elif key in ("--writable", "--delete", "--userns") + tuple(single) and i + 1 < len(args):
            value = args[i + 1]
            if key == "--writable":
                cfg["writable"].append(value)
            elif key == "--delete":
                cfg["deletions"].append(value)
            elif key == "--userns":
                cfg["userns"] = value == "1"
            else:
                cfg[single[key]] = value
            i += 2
        else:
            raise ValueError(f"bad option {key!r}")
    if i >= len(args) - 1 or any(name not in cfg for name in single.values()):
        raise ValueError("missing options or command")
    return cfg, args[i + 1 :]


def main():
    """Parse the options, enter the namespaces, fork PID 1, wait."""
    try:
        cfg, argv = parse(sys.argv[1:])
    except ValueError as exc:
        sys.stderr.write(f"namespace_launcher.py: {exc}; usage: OPTIONS -- ARGV...\n")
        os._exit(2)
    try:
        enter_namespaces(cfg["userns"])
        pid = os.fork()
    except OSError as exc:
        sys.stderr.write(f"{SETUP_FAILED}: {exc}\n")
        os._exit(125)
    if pid == 0:
        child(cfg, argv)
    wait_for(pid)


if __name__ == "__main__":
    main()
