"""The cases of the exec path-attack suite: paths to write through, links and special files the code makes itself,
and ways to undo the sandbox."""

from __future__ import annotations

# (case id, path template, where it must land in the proposal or None: it must only stay contained, mode)
W, A = "w", "a"  # write a new file / open an existing one for appending nothing
TARGETS: list[tuple[str, str, str | None, str]] = [
    ("ws-absolute", "{ws}/attack.txt", "attack.txt", W),
    ("ws-dotdot", "{ws}/pkg/../../{wsname}/attack.txt", "attack.txt", W),
    ("ws-dotdot-root", "{ws}/../../../../../../../../..{ws}/attack.txt", "attack.txt", W),
    ("ws-double-slash", "{ws}//pkg//attack.txt", "pkg/attack.txt", W),
    ("ws-relative", "pkg/attack.txt", "pkg/attack.txt", W),
    ("ws-existing-file", "{ws}/notes.txt", "notes.txt", W),
    ("proc-self-root", "/proc/self/root{ws}/attack.txt", "attack.txt", W),
    ("proc-thread-self-root", "/proc/thread-self/root{ws}/attack.txt", "attack.txt", W),
    ("proc-self-cwd", "/proc/self/cwd/attack.txt", "attack.txt", W),
    ("proc-1-root", "/proc/1/root{ws}/attack.txt", "attack.txt", W),
    ("proc-1-cwd", "/proc/1/cwd/attack.txt", "attack.txt", W),
    ("host-link-to-ws", "{far}/ws-link/attack.txt", "attack.txt", W),
    ("planted-link-inside", "{ws}/link-inside.txt", "notes.txt", W),
    ("planted-hardlink", "{ws}/hardlink.txt", "hardlink.txt", W),
    ("planted-link-far", "{ws}/link-far.txt", None, W),
    ("planted-link-out", "{ws}/link-out.txt", None, W),
    ("planted-linkdir", "{ws}/linkdir/new.txt", None, W),
    ("planted-linkdir-deep", "{ws}/linkdir/sub/deeper/new.txt", None, W),
    ("planted-chain", "{ws}/chain1", None, A),
    ("planted-rel-up", "{ws}/up/etc/lsp-agent-attack-{id}", None, W),
    ("planted-procroot", "{ws}/procroot/etc/lsp-agent-attack-{id}", None, W),
    ("outside-tmp-existing", "{out}/secret.txt", None, A),
    ("outside-tmp-new", "{out}/new.txt", None, W),
    ("outside-far-existing", "{far}/target.txt", None, A),
    ("outside-far-new", "{far}/new.txt", None, W),
    ("dotdot-relative-out", "../outside/new.txt", None, W),
    ("dotdot-relative-etc", "../../../../../../../../etc/lsp-agent-attack-{id}", None, W),
    ("etc-new", "/etc/lsp-agent-attack-{id}", None, W),
    ("etc-passwd", "/etc/passwd", None, A),
    ("usr-new", "/usr/lsp-agent-attack-{id}", None, W),
    ("usr-local-bin", "/usr/local/bin/lsp-agent-attack-{id}", None, W),
    ("root-dir", "/lsp-agent-attack-{id}", None, W),
    ("var-tmp", "/var/tmp/lsp-agent-attack-{id}", None, W),
    ("tmp", "/tmp/lsp-agent-attack-{id}", None, W),
    ("dev-shm", "/dev/shm/lsp-agent-attack-{id}", None, W),
    ("run", "/run/lsp-agent-attack-{id}", None, W),
    ("home", "{home}/lsp-agent-attack-{id}", None, W),
    ("home-ssh", "{home}/.lsp-agent-attack-{id}/authorized_keys", None, W),
    ("sys", "/sys/kernel/lsp-agent-attack-{id}", None, W),
    ("proc-sys", "/proc/sys/kernel/hostname", None, A),
    ("proc-sysrq", "/proc/sysrq-trigger", None, A),
    ("proc-self-root-etc", "/proc/self/root/etc/lsp-agent-attack-{id}", None, W),
    ("proc-1-root-tmp", "/proc/1/root/tmp/lsp-agent-attack-{id}", None, W),
    ("proc-host-pid-root", "/proc/{hostpid}/root{ws}/attack.txt", None, W),
    ("dev-block", "/dev/vda", None, A),
    ("dev-mem", "/dev/mem", None, A),
    ("scratch-upper", "{upper}/injected.txt", None, W),
    ("scratch-staging", "{staging}/pkg/calc.py", None, W),
    ("windows-backslash", "..\\..\\attack.txt", None, W),
    ("windows-drive", "C:\\Windows\\attack.txt", None, W),
    ("windows-unc", "\\\\?\\C:\\attack.txt", None, W),
    ("file-url-ws", "file://{ws}/attack.txt", None, W),
    ("file-url-etc", "file:///etc/lsp-agent-attack-{id}", None, W),
    ("tilde-literal", "~/lsp-agent-attack-{id}", None, W),
    ("tilde-user", "~root/lsp-agent-attack-{id}", None, W),
    ("long-name", "{ws}/" + "a" * 300, None, W),
    ("long-path", "{ws}/" + "d/" * 2100 + "x", None, W),
    ("nul-inside", "{ws}/a\0b", None, W),
    ("nul-outside", "/etc/lsp-agent-attack\0x", None, W),
]

# Each: (Python for run_python and the interpreter, '; '-separated statements; sh for run_command).
SELF_MADE = {
    "symlink-to-etc-passwd": (
        "os.symlink('/etc/passwd', 'evil'); attempt('evil', '', 'a')",
        'ln -s /etc/passwd evil && printf "" >> evil && echo WROTE || echo REFUSED',
    ),
    "symlink-dir-to-etc": (
        "os.symlink('/etc', 'evil'); attempt('evil/lsp-agent-attack', 'x')",
        "ln -s /etc evil && (printf x > evil/lsp-agent-attack && echo WROTE || echo REFUSED)",
    ),
    "symlink-chain-to-far": (
        "os.symlink('b', 'a'); os.symlink('c', 'b'); os.symlink('{far}/new.txt', 'c'); attempt('a', 'x')",
        "ln -s b a && ln -s c b && ln -s {far}/new.txt c && (printf x > a && echo WROTE || echo REFUSED)",
    ),
    "symlink-to-hidden-tmp": (
        "os.symlink('{out}/secret.txt', 'evil'); attempt('evil', '', 'a'); print(open('evil').read())",
        "ln -s {out}/secret.txt evil; cat evil; printf '' >> evil && echo WROTE || echo REFUSED",
    ),
    "replace-pkg-dir-with-link": (
        "import shutil; shutil.rmtree('pkg'); os.symlink('{far}', 'pkg'); attempt('pkg/calc.py', 'x')",
        "rm -rf pkg && ln -s {far} pkg && (printf x > pkg/calc.py && echo WROTE || echo REFUSED)",
    ),
    "hardlink-from-far": (
        "os.link('{far}/target.txt', 'hl'); attempt('hl', '', 'a')",
        "ln {far}/target.txt hl && (printf '' >> hl && echo WROTE || echo REFUSED) || echo REFUSED",
    ),
    "hardlink-from-etc": (
        "os.link('/etc/passwd', 'hl')",
        "ln /etc/passwd hl && echo WROTE || echo REFUSED",
    ),
    "hardlink-from-hidden-tmp": (
        "os.link('{out}/secret.txt', 'hl')",
        "ln {out}/secret.txt hl && echo WROTE || echo REFUSED",
    ),
    "mknod-char-device": (
        "os.mknod('mem', 0o600 | __import__('stat').S_IFCHR, os.makedev(1, 1))",
        "mknod mem c 1 1 && echo WROTE || echo REFUSED",
    ),
    "mknod-block-device": (
        "os.mknod('/tmp/vda', 0o600 | __import__('stat').S_IFBLK, os.makedev(254, 0))",
        "mknod /tmp/vda b 254 0 && echo WROTE || echo REFUSED",
    ),
    "mkfifo-in-workspace": (
        "os.mkfifo('pipe'); print('made')",
        "mkfifo pipe && echo made",
    ),
    "fifo-replaces-file": (
        "os.unlink('notes.txt'); os.mkfifo('notes.txt'); print('made')",
        "rm notes.txt && mkfifo notes.txt && echo made",
    ),
    "planted-fifo-write": (
        "fd = os.open('fifo', os.O_WRONLY | os.O_NONBLOCK)",
        "exec 3<>fifo && echo opened",
    ),
    "read-hidden-tmp": (
        "print(open('{out}/secret.txt').read())",
        "cat {out}/secret.txt link-out.txt",
    ),
    "read-host-process": (
        "print(open('/proc/{hostpid}/environ').read()); print(os.listdir('/proc/{hostpid}/root{out}'))",
        "cat /proc/{hostpid}/environ; ls /proc/{hostpid}/root{out}",
    ),
}

# Each: a shell command that would undo part of the sandbox if it succeeded.
UNDO = {
    "remount-root-rw": "mount -o remount,rw /",
    "remount-bind-root-rw": "mount -o remount,bind,rw /",
    "bind-root-elsewhere": "mount --bind / /mnt",
    "unmount-private-tmp": "umount -l /tmp",
    "unmount-workspace-view": "umount -l {ws}",
    "unmount-dev": "umount -l /dev",
    "mount-fresh-proc": "mount -t proc proc /mnt",
    "userns-remount-rw": "unshare -Urm sh -c 'mount -o remount,bind,rw / && touch /etc/lsp-agent-attack'",
    "userns-unmount-tmp": "unshare -Urm sh -c 'umount -l /tmp && cat {out}/secret.txt'",
    "userns-unmount-view": "unshare -Urm sh -c 'umount -l {ws} && touch {ws}/lsp-agent-attack'",
    "chroot": "chroot / true",
    "nsenter-pid1": "nsenter -t 1 -m -p true",
    "ctypes-mount": 'python3 -c "import ctypes; l = ctypes.CDLL(None, use_errno=True); '
    "r = l.mount(None, b'/', None, 32 | 4096, None); raise SystemExit(0 if r == 0 else 1)\"",
    "setuid-binary": "su -c 'touch /etc/lsp-agent-attack' root",
    "capabilities": "grep -q '^CapEff:.*[1-9a-f]' /proc/self/status",
}
