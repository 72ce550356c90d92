"""This host's network as a multi-node job sees it: what the host's name resolves to, the interfaces and their
addresses, and the interface gloo uses; and the diagnosis of a rank that could not connect at init.

gloo (without ``GLOO_SOCKET_IFNAME``) binds to the address the host's name resolves to and tells the other
ranks that address. Where the name resolves to loopback (Debian's ``127.0.1.1 <host>`` hosts line, a
container's ``127.0.0.1 <host>``), ranks on other hosts then connect to 127.x and are refused: the classic
multi-node pitfall (pytorch/gloo#223). Standard library only (the doctor and fail-fast use it).
"""
import ipaddress
import os
import re
import socket
import struct

SIOCGIFADDR = 0x8915   # Linux ioctl: an interface's IPv4 address


def resolve(name):
    """The addresses ``name`` resolves to (sorted, without repeats); [] when it does not resolve."""
    try:
        infos = socket.getaddrinfo(name, None, 0, socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError):
        return []
    return sorted(set(info[4][0] for info in infos))


def is_loopback(address):
    """True for a loopback address; ``[address]:port`` and ``address:port`` (IPv4) are taken too."""
    host = address.rsplit(']', 1)[0].lstrip('[') if address.startswith('[') else address
    if host.count(':') == 1:
        host = host.split(':')[0]
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def interfaces():
    """[(name, IPv4 address)] of this host's interfaces that have one (Linux), loopback last."""
    try:
        import fcntl
        names = [name for _, name in socket.if_nameindex()]
    except (ImportError, OSError, AttributeError):
        return []
    found = []
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        for name in names:
            try:
                packed = fcntl.ioctl(sock.fileno(), SIOCGIFADDR, struct.pack('256s', name[:15].encode()))
            except OSError:
                continue
            found.append((name, socket.inet_ntoa(packed[20:24])))
    finally:
        sock.close()
    return sorted(found, key=lambda item: is_loopback(item[1]))


def hostname_facts():
    """(host name, its addresses, whether they are all loopback)."""
    name = socket.gethostname()
    addresses = resolve(name)
    return name, addresses, bool(addresses) and all(is_loopback(a) for a in addresses)


def gloo_interface(environ=None):
    """In words: the interface gloo uses here."""
    environ = os.environ if environ is None else environ
    if environ.get('GLOO_SOCKET_IFNAME'):
        return 'GLOO_SOCKET_IFNAME={}'.format(environ['GLOO_SOCKET_IFNAME'])
    name, addresses, _ = hostname_facts()
    return 'GLOO_SOCKET_IFNAME not set: the address of the host name {!r} ({})'.format(
        name, ', '.join(addresses) or 'it does not resolve')


def address_tried(text):
    """The ``[address]:port`` (or ``address:port``) an error message names, or ''."""
    match = re.search(r'(\[[^\]]+\]:\d+)', text) or re.search(r'\b(\d{1,3}(?:\.\d{1,3}){3}:\d+)\b', text)
    return match.group(1) if match else ''


def init_failure_text(exc, environ=None):
    """The diagnosis of a rank that could not connect to the rendezvous or its peers at init: the address it
    tried, what the host's name resolves to, gloo's interface, the interfaces here, and the fix."""
    environ = os.environ if environ is None else environ
    name, addresses, loopback = hostname_facts()
    tried = address_tried(str(exc))
    master = '{}:{}'.format(environ.get('MASTER_ADDR', '?'), environ.get('MASTER_PORT', '?'))
    routable = [(n, a) for n, a in interfaces() if not is_loopback(a)]
    lines = ['address tried: {}{}'.format(
        tried or 'not named in the error', ' (loopback: a peer on another host advertised its host name\'s '
                                           'loopback address)' if tried and is_loopback(tried) else ''),
             'rendezvous: MASTER_ADDR:MASTER_PORT = {} (resolves to {})'.format(
                 master, ', '.join(resolve(environ.get('MASTER_ADDR', ''))) or 'nothing'),
             'this host: {!r} resolves to {}{}'.format(name, ', '.join(addresses) or 'nothing',
                                                       ' (loopback)' if loopback else ''),
             "gloo's interface: {}".format(gloo_interface(environ)),
             'interfaces here: {}'.format(', '.join('{} {}'.format(n, a) for n, a in routable) or 'none but loopback')]
    example = routable[0][0] if routable else '<interface>'
    lines.append('fix: on every node, the host name must resolve to an address the other nodes reach (the hosts '
                 'file, /etc/hosts, or DNS), or set GLOO_SOCKET_IFNAME to the interface that carries it '
                 '(here e.g. GLOO_SOCKET_IFNAME={}); MASTER_ADDR must be an address of the first node that '
                 'every node reaches'.format(example))
    return '\n'.join(lines)
