//! The question of a DNS query, decoded from the bytes a process sends to port 53. Pure.
//!
//! The system-call observer sees the payload of `sendto`/`sendmsg`/`sendmmsg` before the kernel
//! does; for traffic to port 53 it names the lookup (`A api.example.com`), which says more to a
//! person than the resolver's address. UDP carries the message as is, TCP behind a two-byte
//! length; both are accepted. Only queries (QR bit clear) with well-formed question sections
//! decode; anything else is `None` and the effect keeps its address alone.

/// The most questions kept from one message (real resolvers send one).
const MAX_QUESTIONS: usize = 4;
/// The longest name on the wire (RFC 1035: 255 octets).
const MAX_NAME: usize = 255;

/// One question: the name (dotted, printable bytes as they are, others `\DDD`) and its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub name: String,
    pub qtype: u16,
}

impl Question {
    /// `A`, `AAAA`, … or `TYPE65534` for types without a common mnemonic.
    pub fn type_name(&self) -> String {
        let known = match self.qtype {
            1 => "A",
            2 => "NS",
            5 => "CNAME",
            6 => "SOA",
            12 => "PTR",
            15 => "MX",
            16 => "TXT",
            28 => "AAAA",
            33 => "SRV",
            64 => "SVCB",
            65 => "HTTPS",
            255 => "ANY",
            _ => return format!("TYPE{}", self.qtype),
        };
        known.to_string()
    }
}

/// The questions of a DNS query sent over UDP (the message) or TCP (length-prefixed).
pub fn questions(payload: &[u8]) -> Option<Vec<Question>> {
    parse(payload).or_else(|| {
        let len = u16::from_be_bytes([*payload.first()?, *payload.get(1)?]) as usize;
        let body = payload.get(2..)?;
        (len <= body.len()).then_some(())?;
        parse(&body[..len])
    })
}

fn parse(msg: &[u8]) -> Option<Vec<Question>> {
    let header = msg.get(..12)?;
    // QR (bit 7 of byte 2) set: a response, not a query. Opcode (bits 3-6) 0: a standard query.
    if header[2] & 0x80 != 0 || (header[2] >> 3) & 0x0f != 0 {
        return None;
    }
    let count = u16::from_be_bytes([header[4], header[5]]) as usize;
    if count == 0 || count > 16 {
        return None;
    }
    let mut at = 12;
    let mut out = Vec::new();
    for _ in 0..count.min(MAX_QUESTIONS) {
        let (name, next) = name(msg, at)?;
        let qtype = u16::from_be_bytes([*msg.get(next)?, *msg.get(next + 1)?]);
        // The class must be there too (IN is 1; anything is accepted).
        msg.get(next + 3)?;
        out.push(Question { name, qtype });
        at = next + 4;
    }
    Some(out)
}

/// An uncompressed name starting at `at` (questions are never compressed by real clients; a
/// pointer there is not a query the observer needs to read).
fn name(msg: &[u8], mut at: usize) -> Option<(String, usize)> {
    let mut out = String::new();
    let mut wire = 0usize;
    loop {
        let len = *msg.get(at)? as usize;
        at += 1;
        if len == 0 {
            break;
        }
        if len > 63 {
            return None;
        }
        wire += len + 1;
        if wire > MAX_NAME {
            return None;
        }
        let label = msg.get(at..at + len)?;
        at += len;
        if !out.is_empty() {
            out.push('.');
        }
        for &b in label {
            match b {
                b'.' | b'\\' => {
                    out.push('\\');
                    out.push(b as char);
                }
                0x21..=0x7e => out.push(b as char),
                _ => out.push_str(&format!("\\{b:03}")),
            }
        }
    }
    if out.is_empty() {
        out.push('.');
    }
    Some((out, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A query as glibc's resolver builds it: id, RD set, one question, maybe an OPT record.
    fn query(id: u16, name: &str, qtype: u16) -> Vec<u8> {
        let mut m = Vec::new();
        m.extend(id.to_be_bytes());
        m.extend([0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
        for label in name.split('.') {
            m.push(label.len() as u8);
            m.extend(label.as_bytes());
        }
        m.push(0);
        m.extend(qtype.to_be_bytes());
        m.extend([0, 1]);
        m
    }

    #[test]
    fn a_udp_query_names_its_question() {
        let q = questions(&query(0x1234, "api.deploy.invalid", 28)).unwrap();
        assert_eq!(q.len(), 1);
        assert_eq!(q[0].name, "api.deploy.invalid");
        assert_eq!(q[0].type_name(), "AAAA");
    }

    #[test]
    fn a_tcp_query_is_read_behind_its_length() {
        let body = query(7, "example.com", 1);
        let mut tcp = (body.len() as u16).to_be_bytes().to_vec();
        tcp.extend(&body);
        let q = questions(&tcp).unwrap();
        assert_eq!(
            (q[0].name.as_str(), q[0].type_name()),
            ("example.com", "A".into())
        );
    }

    #[test]
    fn responses_garbage_and_truncated_names_are_not_queries() {
        let mut response = query(1, "example.com", 1);
        response[2] |= 0x80;
        assert_eq!(questions(&response), None);
        assert_eq!(questions(b"GET / HTTP/1.1\r\n\r\n"), None);
        let q = query(1, "example.com", 1);
        assert_eq!(questions(&q[..q.len() - 5]), None);
        assert_eq!(questions(&[]), None);
    }

    #[test]
    fn odd_bytes_in_labels_are_escaped_and_unknown_types_numbered() {
        let mut m = query(1, "x", 65534);
        // Replace the label `x` with three bytes: a dot, a space and 0xff.
        m.splice(12..14, [3u8, b'.', b' ', 0xff]);
        let q = questions(&m).unwrap();
        assert_eq!(q[0].name, "\\.\\032\\255");
        assert_eq!(q[0].type_name(), "TYPE65534");
    }
}
