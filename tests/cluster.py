"""A cluster of Linux network namespaces: several "hosts" on one machine.

Each host is a long-lived ``sleep`` started by ``unshare --net --uts --mount``:
its own network stack (one interface, ``eth0``, with an address in SUBNET),
its own hostname (UTS namespace) and its own /etc/hosts (a bind mount in its
mount namespace; the real /etc/hosts is never touched). The hosts' ``eth0``
are veth pairs whose other ends sit on a bridge in a further namespace, the
switch, so the machine's own network namespace sees nothing of it: all the
traffic stays between the namespaces.

Open MPI starts its daemons (orted) with the launch agent ``agent``
(``plm_rsh_agent``, in place of ssh): given a host name and a command, it
runs the command inside that host's namespaces with ``nsenter``, with that
host's own TMPDIR (real hosts have their own /tmp). ``mpirun`` itself runs on
the first host (``Cluster.on``), as on a real cluster's first node. The ranks
talk over TCP only (``Cluster.mpi_env``: ``btl tcp,self``, the interfaces
pinned to SUBNET).

``Cluster.close`` removes everything: it kills every process left inside the
hosts' namespaces (a daemon of a failed run, say), then the host and switch
processes (the namespaces, links and bridge go with them) and deletes the
folder of the hostfile, agent, hosts file and temporary folders. Should the
process that made the cluster die without closing it, the host and switch
processes die with it (PR_SET_PDEATHSIG), and the namespaces with them.

Used by tests/test_cluster.py (the ``cluster`` fixture); by hand::

    sudo .venv/bin/python tests/cluster.py      # prints the hostfile and env, waits

Needs root (or CAP_SYS_ADMIN and CAP_NET_ADMIN), ``unshare``, ``nsenter``
and ``ip``; ``unavailable()`` says why a cluster cannot be made here.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

SUBNET = "10.77.0.0/24"
PREFIX = "10.77.0."
TOOLS = ("unshare", "nsenter", "ip", "mount", "hostname")


def unavailable() -> str | None:
    """Why namespaces cannot be made here (None: they can)."""
    if not sys.platform.startswith("linux"):
        return "network namespaces need Linux"
    if os.geteuid() != 0:
        return "making network namespaces needs root"
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        return f"{', '.join(missing)} not found (util-linux, iproute2)"
    probe = subprocess.run(["unshare", "--net", "--uts", "--mount", "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return f"unshare --net --uts --mount fails: {probe.stderr.strip()}"
    return None


def _die_with_parent() -> None:
    """In a holder, before exec: be killed when the process that made the
    cluster dies without closing it (PR_SET_PDEATHSIG, kept across exec)."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class ClusterError(RuntimeError):
    pass


def _sh(cmd: list[str], what: str) -> None:
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if res.returncode != 0:
        raise ClusterError(f"{what}: {shlex.join(cmd)}: exit {res.returncode}: "
                           f"{res.stderr.strip()}")


@dataclass
class Host:
    name: str
    addr: str
    proc: subprocess.Popen
    tmpdir: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def enter(self, cwd: Path | str | None = None) -> list[str]:
        """The command prefix that runs a command on this host, in cwd (by
        default this process's: entering a mount namespace would go to /)."""
        return ["nsenter", "-t", str(self.pid), "-n", "-u", "-m",
                f"--wd={os.path.abspath(cwd if cwd is not None else os.getcwd())}", "--"]


@dataclass
class Cluster:
    nhosts: int = 3
    slots: int = 2
    # False: every host keeps this machine's hostname / shares one TMPDIR
    # (to show what they are for: docs/cluster.md)
    own_hostnames: bool = True
    own_tmpdirs: bool = True
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="sgl-cluster-")))
    hosts: list[Host] = field(default_factory=list)
    switch: subprocess.Popen | None = None

    # ---------------------------------------------------------------- start

    def start(self) -> Cluster:
        """Make the switch and the hosts; on any failure, undo what was made."""
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def _start(self) -> None:
        names = [f"sglhost{i}" for i in range(self.nhosts)]
        addrs = [f"{PREFIX}{i + 1}" for i in range(self.nhosts)]
        hosts_file = self.root / "hosts"
        hosts_file.write_text("127.0.0.1 localhost\n"
                              + "".join(f"{a} {n}\n" for a, n in zip(addrs, names)))
        self.switch = self._holder(["unshare", "--net", "--"], "")
        sw = ["nsenter", "-t", str(self.switch.pid), "-n", "--"]
        _sh(sw + ["ip", "link", "add", "br0", "type", "bridge"], "the bridge")
        _sh(sw + ["ip", "link", "set", "br0", "up"], "the bridge")
        for i, (name, addr) in enumerate(zip(names, addrs)):
            tmpdir = self.root / "tmp" / (name if self.own_tmpdirs else "shared")
            tmpdir.mkdir(parents=True, exist_ok=True)
            setup = (f"hostname {name} && " if self.own_hostnames else "") + (
                f"mount --bind {shlex.quote(str(hosts_file))} /etc/hosts && ")
            proc = self._holder(["unshare", "--net", "--uts", "--mount",
                                 "--propagation", "private", "--"], setup)
            host = Host(name, addr, proc, tmpdir)
            self.hosts.append(host)
            veth = f"veth{i}"
            _sh(sw + ["ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0",
                      "netns", str(host.pid)], f"the link of {name}")
            _sh(sw + ["ip", "link", "set", veth, "master", "br0", "up"], f"the link of {name}")
            on = ["nsenter", "-t", str(host.pid), "-n", "--"]
            _sh(on + ["ip", "addr", "add", f"{addr}/24", "dev", "eth0"], f"the address of {name}")
            _sh(on + ["ip", "link", "set", "eth0", "up"], f"eth0 of {name}")
            _sh(on + ["ip", "link", "set", "lo", "up"], f"lo of {name}")
        self._write_agent()
        self.hostfile()

    def _holder(self, unshare: list[str], setup: str) -> subprocess.Popen:
        """A process holding new namespaces: runs setup, says 'ready', sleeps."""
        script = f"{setup}echo ready && exec sleep 86400"
        proc = subprocess.Popen(unshare + ["sh", "-c", script], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True, preexec_fn=_die_with_parent)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if line.strip() != "ready":
            proc.kill()
            _, err = proc.communicate()
            raise ClusterError(f"{shlex.join(unshare)} sh -c {script!r}: {err.strip()}")
        return proc

    def _write_agent(self) -> None:
        """The launch agent: `agent HOST COMMAND...` runs COMMAND (a shell
        command line, as ssh would) inside HOST's namespaces."""
        cases = "".join(f"  {h.name}|{h.addr}) pid={h.pid}; tmp={shlex.quote(str(h.tmpdir))} ;;\n"
                        for h in self.hosts)
        agent = self.agent
        agent.write_text(
            "#!/bin/sh\n"
            "# plm_rsh_agent of the sgl namespace cluster (tests/cluster.py): like ssh HOST CMD\n"
            'host=$1; shift\n'
            'case "$host" in\n'
            f"{cases}"
            '  *) echo "agent: unknown host $host" >&2; exit 255 ;;\n'
            "esac\n"
            'exec nsenter -t "$pid" -n -u -m -- env TMPDIR="$tmp" /bin/sh -c "$*"\n')
        agent.chmod(0o755)

    # ---------------------------------------------------------------- use

    @property
    def agent(self) -> Path:
        return self.root / "agent"

    def hostfile(self, slots: int | None = None) -> Path:
        """An Open MPI hostfile naming every host, with `slots` slots each."""
        n = self.slots if slots is None else slots
        path = self.root / f"hostfile.{n}"
        path.write_text("".join(f"{h.name} slots={n}\n" for h in self.hosts))
        return path

    def mpi_env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """The environment of a run: the agent, TCP only, the bridge's subnet,
        the first host's TMPDIR."""
        env = dict(os.environ if base is None else base)
        env.update({
            "OMPI_MCA_plm_rsh_agent": str(self.agent),
            "OMPI_MCA_plm_rsh_no_tree_spawn": "1",
            "OMPI_MCA_pml": "ob1",
            "OMPI_MCA_btl": "tcp,self",
            "OMPI_MCA_btl_tcp_if_include": SUBNET,
            "OMPI_MCA_oob_tcp_if_include": SUBNET,
            "TMPDIR": str(self.hosts[0].tmpdir),
        })
        if os.geteuid() == 0:
            env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
            env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
        return env

    def on(self, cmd: list[str], host: int = 0, cwd: Path | str | None = None) -> list[str]:
        """cmd, run on a host (by default the first, where mpirun runs) in cwd."""
        return self.hosts[host].enter(cwd) + cmd

    # ---------------------------------------------------------------- close

    def _netns_ids(self) -> set[str]:
        ids = set()
        for h in self.hosts:
            try:
                ids.add(os.readlink(f"/proc/{h.pid}/ns/net"))
            except OSError:
                pass
        return ids

    def stray_processes(self) -> list[int]:
        """Processes inside the hosts' network namespaces other than the
        hosts' own (daemons or ranks of a run)."""
        ids = self._netns_ids()
        own = {h.pid for h in self.hosts}
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) in own:
                continue
            try:
                if os.readlink(f"/proc/{entry}/ns/net") in ids:
                    found.append(int(entry))
            except OSError:
                pass
        return found

    def close(self) -> None:
        """Remove everything start made (safe to call more than once).  The
        processes left in the hosts are killed until none is left (a daemon
        may still start one while the first ones die: the test of close
        once found one there right after it), for at most 10 s."""
        deadline = time.monotonic() + 10
        while (strays := self.stray_processes()) and time.monotonic() < deadline:
            for pid in strays:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)
        procs = [h.proc for h in self.hosts] + ([self.switch] if self.switch else [])
        for p in procs:
            if p.poll() is None:
                p.kill()
        for p in procs:
            try:
                p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self.hosts.clear()
        self.switch = None
        shutil.rmtree(self.root, ignore_errors=True)


def main() -> int:
    why = unavailable()
    if why:
        print(f"cluster.py: {why}", file=sys.stderr)
        return 2
    # kill (SIGTERM) or a closed terminal (SIGHUP) removes the cluster too
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(0))
    cluster = Cluster().start()
    try:
        env = cluster.mpi_env({})
        print(f"hostfile: {cluster.hostfile()}")
        for h in cluster.hosts:
            print(f"{h.name}  {h.addr}  nsenter -t {h.pid} -n -u -m")
        print("environment of mpirun (on sglhost0):")
        for k, v in env.items():
            print(f"  export {k}={shlex.quote(v)}")
        print("Ctrl-C removes the cluster.")
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0
    finally:
        cluster.close()


if __name__ == "__main__":
    sys.exit(main())
