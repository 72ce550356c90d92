"""Two hosts with their own addresses on this machine, for the multi-node launches: two network namespaces
joined by a veth pair (10.250.0.1 and 10.250.0.2, nothing else reachable), each with its own host name
(a UTS namespace) and its own hosts file (a mount namespace with a file bound over /etc/hosts). A command runs
on host N through ``nsenter`` (``--net --uts --mount``; not ``ip netns exec``, which remounts /sys).

``loopback_names=True`` reproduces the classic pitfall: each host's name resolves to 127.0.1.1 there (Debian's
hosts line), so gloo advertises a loopback address to the other host.

Where namespaces cannot be made (not root, no ``unshare``/``ip``, a kernel or sandbox that refuses them) the
tests skip with the reason. ``stop`` kills the two holder processes by their PIDs: the namespaces, the veth pair
and the bound hosts files go with them; the machine's /etc/hosts is never written.
"""
import os
import shutil
import subprocess
import tempfile
import time
import uuid

import pytest

ADDRESSES = ('10.250.0.1', '10.250.0.2')


def _run(cmd):
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if done.returncode != 0:
        raise OSError('`{}` failed (exit status {}): {}'.format(' '.join(cmd), done.returncode, done.stdout.strip()))
    return done.stdout


class TwoHosts(object):
    def __init__(self, loopback_names=False):
        tag = uuid.uuid4().hex[:6]
        self.names = ('kr-{}-n0'.format(tag), 'kr-{}-n1'.format(tag))
        self.links = ('krv{}a'.format(tag), 'krv{}b'.format(tag))
        self.loopback_names = loopback_names
        self.holders = []
        self.folder = None

    def hosts_text(self, i):
        own = '127.0.1.1' if self.loopback_names else ADDRESSES[i]
        lines = ['127.0.0.1 localhost', '{} {}'.format(own, self.names[i]),
                 '{} {}'.format(ADDRESSES[1 - i], self.names[1 - i])]
        return '\n'.join(lines) + '\n'

    def start(self):
        missing = [b for b in ('unshare', 'nsenter', 'ip', 'mount') if shutil.which(b) is None]
        if missing or os.geteuid() != 0:
            raise OSError('network namespaces need root and {}'.format(', '.join(missing) or 'unshare'))
        self.folder = tempfile.mkdtemp(prefix='kradar-hosts.')
        try:
            for i in range(2):
                holder = subprocess.Popen(['unshare', '--net', '--uts', '--mount', 'sleep', '86400'],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                self.holders.append(holder)
            own = os.readlink('/proc/self/ns/net')
            for holder in self.holders:   # the holder has left our namespace once unshare has exec'd sleep
                for _ in range(200):
                    if holder.poll() is not None:
                        raise OSError('unshare failed: ' + holder.stderr.read().decode('utf-8', 'replace').strip())
                    try:
                        if os.readlink('/proc/{}/ns/net'.format(holder.pid)) != own:
                            break
                    except OSError:
                        pass
                    time.sleep(0.01)
            _run(['ip', 'link', 'add', self.links[0], 'type', 'veth', 'peer', 'name', self.links[1]])
            for i, holder in enumerate(self.holders):
                pid = str(holder.pid)
                _run(['ip', 'link', 'set', self.links[i], 'netns', pid])
                net = ['nsenter', '-t', pid, '--net']
                _run(net + ['ip', 'addr', 'add', ADDRESSES[i] + '/24', 'dev', self.links[i]])
                _run(net + ['ip', 'link', 'set', self.links[i], 'up'])
                _run(net + ['ip', 'link', 'set', 'lo', 'up'])
                _run(['nsenter', '-t', pid, '--uts', 'hostname', self.names[i]])
                hosts = os.path.join(self.folder, 'hosts{}'.format(i))
                with open(hosts, 'w') as f:
                    f.write(self.hosts_text(i))
                _run(['nsenter', '-t', pid, '--mount', 'mount', '--bind', hosts, '/etc/hosts'])
        except Exception:
            self.stop()
            raise
        return self

    def prefix(self, i, cwd=None):
        """The command prefix that runs a command on host ``i``, in ``cwd`` (default: this one; entering the
        mount namespace would otherwise start it in /)."""
        return [shutil.which('nsenter'), '-t', str(self.holders[i].pid), '--net', '--uts', '--mount',
                '--wd={}'.format(cwd or os.getcwd())]

    def stop(self):
        for holder in self.holders:
            if holder.poll() is None:
                holder.kill()
            holder.wait()
        self.holders = []
        if subprocess.run(['ip', 'link', 'show', self.links[0]], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0:   # only if moving it failed
            _run(['ip', 'link', 'del', self.links[0]])
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


def two_hosts_or_skip(loopback_names=False):
    """A started ``TwoHosts``, or skip the test with the reason they cannot be made."""
    try:
        return TwoHosts(loopback_names).start()
    except OSError as exc:
        pytest.skip('two hosts in network namespaces cannot be made here: {}'.format(exc))


@pytest.fixture
def two_hosts():
    hosts = two_hosts_or_skip()
    yield hosts
    hosts.stop()


@pytest.fixture
def two_hosts_named_loopback():
    hosts = two_hosts_or_skip(loopback_names=True)
    yield hosts
    hosts.stop()
