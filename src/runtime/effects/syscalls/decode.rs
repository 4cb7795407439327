//! What a trapped call's memory says, decoded from bytes read out of the process: socket
//! addresses, `msghdr`s and argv. Pure (Linux layouts of a 64-bit process).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

pub const AF_UNSPEC: u16 = 0;
pub const AF_UNIX: u16 = 1;
pub const AF_INET: u16 = 2;
pub const AF_INET6: u16 = 10;
pub const AF_NETLINK: u16 = 16;

/// Where a `connect` or a send with an address goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// An IP endpoint: a network effect (loopback included: it is still an action).
    Ip(SocketAddr),
    /// A Unix socket: local IPC, never a network effect.
    Unix(UnixName),
    /// The kernel (route and interface queries of `getaddrinfo`): not an effect.
    Netlink,
    /// `AF_UNSPEC`: dissolves a UDP socket's association; sends nothing.
    Unspec,
    /// Any other family (packet, Bluetooth, vsock…), by number.
    Other(u16),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnixName {
    Path(String),
    /// The abstract namespace (`\0name`), shown with a leading `@`.
    Abstract(String),
    Unnamed,
}

impl std::fmt::Display for UnixName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UnixName::Path(p) => f.write_str(p),
            UnixName::Abstract(n) => write!(f, "@{n}"),
            UnixName::Unnamed => f.write_str("(unnamed)"),
        }
    }
}

/// A `struct sockaddr` of `bytes.len()` bytes (the length the caller passed).
pub fn sockaddr(bytes: &[u8]) -> Option<Destination> {
    let family = u16::from_ne_bytes([*bytes.first()?, *bytes.get(1)?]);
    let port = |b: &[u8]| u16::from_be_bytes([b[2], b[3]]);
    Some(match family {
        AF_INET => {
            let b = bytes.get(..8)?;
            let ip = Ipv4Addr::new(b[4], b[5], b[6], b[7]);
            Destination::Ip(SocketAddr::new(IpAddr::V4(ip), port(b)))
        }
        AF_INET6 => {
            let b = bytes.get(..24)?;
            let mut octets = [0u8; 16];
            octets.copy_from_slice(&b[8..24]);
            let ip = Ipv6Addr::from(octets);
            // A v4-mapped address is an IPv4 destination reached through a dual-stack socket.
            let ip = match ip.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => IpAddr::V6(ip),
            };
            Destination::Ip(SocketAddr::new(ip, port(b)))
        }
        AF_UNIX => {
            let path = bytes.get(2..).unwrap_or_default();
            if path.is_empty() {
                Destination::Unix(UnixName::Unnamed)
            } else if path[0] == 0 {
                let name = &path[1..];
                let end = name.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1);
                Destination::Unix(UnixName::Abstract(
                    String::from_utf8_lossy(&name[..end]).into_owned(),
                ))
            } else {
                let end = path.iter().position(|b| *b == 0).unwrap_or(path.len());
                Destination::Unix(UnixName::Path(
                    String::from_utf8_lossy(&path[..end]).into_owned(),
                ))
            }
        }
        AF_NETLINK => Destination::Netlink,
        AF_UNSPEC => Destination::Unspec,
        other => Destination::Other(other),
    })
}

/// The fields of a 64-bit `struct msghdr` the observer reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MsgHdr {
    pub name: u64,
    pub name_len: u32,
    pub iov: u64,
    pub iov_len: u64,
}

/// `sizeof(struct msghdr)` and `sizeof(struct mmsghdr)` on 64-bit Linux.
pub const MSGHDR_SIZE: usize = 56;
pub const MMSGHDR_SIZE: usize = 64;

pub fn msghdr(b: &[u8]) -> Option<MsgHdr> {
    let b = b.get(..MSGHDR_SIZE)?;
    Some(MsgHdr {
        name: u64_at(b, 0),
        name_len: u32::from_ne_bytes(b[8..12].try_into().ok()?),
        iov: u64_at(b, 16),
        iov_len: u64_at(b, 24),
    })
}

/// One `struct iovec`: base and length.
pub fn iovec(b: &[u8]) -> Option<(u64, u64)> {
    Some((u64_at(b.get(..16)?, 0), u64_at(b, 8)))
}

pub fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_ne_bytes(w)
}

/// `/usr/bin/ssh` for `ssh` from `/proc/<pid>/cwd` = `/home/u` and a relative path: the
/// program an `execve` names, made absolute against the caller's directory.
pub fn absolute(path: &str, base: &str) -> String {
    if path.starts_with('/') || base.is_empty() {
        path.to_string()
    } else {
        format!("{}/{}", base.trim_end_matches('/'), path)
    }
}

/// The interpreter a script's `#!` line names, with its one optional argument.
pub fn shebang(head: &[u8]) -> Option<String> {
    let line = head.strip_prefix(b"#!")?;
    let end = line.iter().position(|b| *b == b'\n').unwrap_or(line.len());
    let text = String::from_utf8_lossy(&line[..end]).trim().to_string();
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(ip: [u8; 4], port: u16) -> Vec<u8> {
        let mut b = AF_INET.to_ne_bytes().to_vec();
        b.extend(port.to_be_bytes());
        b.extend(ip);
        b.extend([0; 8]);
        b
    }

    #[test]
    fn inet_addresses_decode_with_their_port() {
        assert_eq!(
            sockaddr(&v4([10, 255, 255, 53], 53)),
            Some(Destination::Ip("10.255.255.53:53".parse().unwrap()))
        );
        let mut b = AF_INET6.to_ne_bytes().to_vec();
        b.extend(443u16.to_be_bytes());
        b.extend([0; 4]);
        b.extend(Ipv6Addr::LOCALHOST.octets());
        b.extend([0; 4]);
        assert_eq!(
            sockaddr(&b),
            Some(Destination::Ip("[::1]:443".parse().unwrap()))
        );
        // ::ffff:127.0.0.1 is an IPv4 destination.
        b[8..24].copy_from_slice(&Ipv4Addr::LOCALHOST.to_ipv6_mapped().octets());
        assert_eq!(
            sockaddr(&b),
            Some(Destination::Ip("127.0.0.1:443".parse().unwrap()))
        );
        assert_eq!(sockaddr(&v4([1, 2, 3, 4], 80)[..6]), None, "too short");
    }

    #[test]
    fn unix_names_are_paths_abstract_or_unnamed() {
        let mut b = AF_UNIX.to_ne_bytes().to_vec();
        b.extend(b"/var/run/nscd/socket\0\0\0");
        assert_eq!(
            sockaddr(&b),
            Some(Destination::Unix(UnixName::Path(
                "/var/run/nscd/socket".into()
            )))
        );
        let mut a = AF_UNIX.to_ne_bytes().to_vec();
        a.extend(b"\0dbus-xyz\0");
        let d = sockaddr(&a).unwrap();
        assert_eq!(d, Destination::Unix(UnixName::Abstract("dbus-xyz".into())));
        assert!(matches!(d, Destination::Unix(n) if n.to_string() == "@dbus-xyz"));
        assert_eq!(
            sockaddr(&AF_UNIX.to_ne_bytes()),
            Some(Destination::Unix(UnixName::Unnamed))
        );
        assert_eq!(
            sockaddr(&AF_NETLINK.to_ne_bytes()),
            Some(Destination::Netlink)
        );
        assert_eq!(sockaddr(&17u16.to_ne_bytes()), Some(Destination::Other(17)));
    }

    #[test]
    fn msghdr_fields_are_at_their_64_bit_offsets() {
        let mut b = vec![0u8; MSGHDR_SIZE];
        b[0..8].copy_from_slice(&0x1000u64.to_ne_bytes());
        b[8..12].copy_from_slice(&16u32.to_ne_bytes());
        b[16..24].copy_from_slice(&0x2000u64.to_ne_bytes());
        b[24..32].copy_from_slice(&2u64.to_ne_bytes());
        assert_eq!(
            msghdr(&b),
            Some(MsgHdr {
                name: 0x1000,
                name_len: 16,
                iov: 0x2000,
                iov_len: 2
            })
        );
        assert_eq!(msghdr(&b[..40]), None);
    }

    #[test]
    fn programs_are_made_absolute_and_scripts_name_their_interpreter() {
        assert_eq!(absolute("bin/helper", "/srv/app/"), "/srv/app/bin/helper");
        assert_eq!(absolute("/usr/bin/ssh", "/srv"), "/usr/bin/ssh");
        assert_eq!(
            shebang(b"#!/usr/bin/env python3\nprint()"),
            Some("/usr/bin/env python3".into())
        );
        assert_eq!(shebang(b"\x7fELF"), None);
    }
}
