//! The loopback canary: an HTTP(S) proxy listener on 127.0.0.1 that records every connection and
//! forwards nothing. A client configured with `HTTP_PROXY` sends `GET http://host/path` (plain HTTP)
//! or `CONNECT host:443` (HTTPS) here; a client whose API base URL the user pointed at the canary
//! sends an origin-form request (`POST /v1/deploy`), or a TLS ClientHello when the URL says
//! `https://`. Each is recorded the moment it is accepted (under the tag current then), then
//! described once its head is read, and answered with an error.
//!
//! Query strings and userinfo are never recorded (they carry tokens); nor are headers.

use super::{EffectKind, Recorder};
use crate::issue::escape_bytes;
use serde_json::json;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// The most of a request head the canary reads.
const MAX_HEAD: usize = 16 * 1024;
/// How long a client may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_millis(1000);
const BODY: &str = "mcp-stdio-guard canary: this request was recorded and not forwarded\n";

pub struct Canary {
    addr: SocketAddr,
    accept: JoinHandle<()>,
    handlers: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Canary {
    pub async fn start(recorder: Recorder, start: Instant) -> std::io::Result<Canary> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let handlers: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let list = handlers.clone();
        let authority = addr.to_string();
        let accept = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let at = start.elapsed();
                let index = recorder.push(
                    EffectKind::Http,
                    at,
                    "connection (no request read yet)".into(),
                    json!({}),
                );
                let recorder = recorder.clone();
                let authority = authority.clone();
                let h = tokio::spawn(async move {
                    let (summary, detail) = serve(stream, &authority).await;
                    recorder.update(index, summary, detail);
                });
                list.lock().unwrap_or_else(|p| p.into_inner()).push(h);
            }
        });
        Ok(Canary {
            addr,
            accept,
            handlers,
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `127.0.0.1:PORT`.
    pub fn authority(&self) -> String {
        self.addr.to_string()
    }

    /// Stops accepting; lets connections in flight finish describing themselves (bounded).
    pub async fn stop(self) {
        self.accept.abort();
        let handlers: Vec<JoinHandle<()>> =
            std::mem::take(&mut *self.handlers.lock().unwrap_or_else(|p| p.into_inner()));
        for mut h in handlers {
            if tokio::time::timeout(HEAD_TIMEOUT, &mut h).await.is_err() {
                h.abort();
            }
        }
    }
}

/// Reads the request head, answers with an error, and describes the request.
async fn serve(mut stream: TcpStream, authority: &str) -> (String, serde_json::Value) {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + HEAD_TIMEOUT;
    loop {
        let read = tokio::time::timeout_at(deadline, stream.read(&mut buf)).await;
        match read {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => break,
            Ok(Ok(n)) => {
                head.extend_from_slice(&buf[..n]);
                if head.first() == Some(&0x16)
                    || memchr::memmem::find(&head, b"\r\n\r\n").is_some()
                    || head.len() >= MAX_HEAD
                {
                    break;
                }
            }
        }
    }
    let described = describe(&head, authority);
    if head.first() != Some(&0x16) && !head.is_empty() {
        let reply = if described.1["method"] == "CONNECT" {
            "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string()
        } else {
            format!(
                "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{BODY}",
                BODY.len()
            )
        };
        let _ = stream.write_all(reply.as_bytes()).await;
    }
    let _ = stream.shutdown().await;
    described
}

/// A one-line summary and structured facts of what a client sent. Pure.
pub fn describe(head: &[u8], authority: &str) -> (String, serde_json::Value) {
    if head.is_empty() {
        return (
            "connection closed without a request".into(),
            json!({"protocol": "none"}),
        );
    }
    if head[0] == 0x16 {
        let sni = tls_server_name(head);
        let summary = match &sni {
            Some(name) => format!("TLS handshake for {name} (HTTPS straight to the canary)"),
            None => "TLS handshake (HTTPS straight to the canary)".into(),
        };
        return (summary, json!({"protocol": "tls", "serverName": sni}));
    }
    let line_end = memchr::memmem::find(head, b"\r\n").unwrap_or(head.len());
    let line = String::from_utf8_lossy(&head[..line_end]);
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return not_http(head);
    };
    if !version.starts_with("HTTP/")
        || method.is_empty()
        || !method.bytes().all(|b| b.is_ascii_uppercase())
    {
        return not_http(head);
    }
    let host = header(head, "host").map(|h| h.replace(authority, "canary"));
    if method == "CONNECT" {
        let target = target.replace(authority, "canary");
        return (
            format!("CONNECT {target}"),
            json!({"protocol": "http", "method": method, "target": target}),
        );
    }
    let target = clean_url(target).replace(authority, "canary");
    let (summary, direct) = if target.starts_with('/') {
        let host = host.clone().unwrap_or_else(|| "canary".into());
        (format!("{method} http://{host}{target}"), host == "canary")
    } else {
        (format!("{method} {target}"), false)
    };
    (
        summary,
        json!({"protocol": "http", "method": method, "target": target, "host": host, "direct": direct}),
    )
}

fn not_http(head: &[u8]) -> (String, serde_json::Value) {
    let shown = escape_bytes(head, 48);
    (
        format!("non-HTTP bytes {shown}"),
        json!({"protocol": "unknown", "bytes": shown}),
    )
}

/// The value of a header (case-insensitive name), if present.
fn header(head: &[u8], name: &str) -> Option<String> {
    let text = String::from_utf8_lossy(head);
    text.split("\r\n").skip(1).find_map(|line| {
        let (k, v) = line.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case(name)
            .then(|| v.trim().to_string())
    })
}

/// A URL without its userinfo, query and fragment (they carry tokens).
fn clean_url(url: &str) -> String {
    let url = url.split(['?', '#']).next().unwrap_or("");
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (auth, path) = match rest.find('/') {
                Some(i) => (&rest[..i], &rest[i..]),
                None => (rest, ""),
            };
            let host = auth.rsplit('@').next().unwrap_or(auth);
            format!("{scheme}://{host}{path}")
        }
        None => url.to_string(),
    }
}

/// The server name (SNI) of a TLS ClientHello, if the bytes hold a complete one.
fn tls_server_name(b: &[u8]) -> Option<String> {
    let u16_at = |i: usize| -> Option<usize> {
        Some(((*b.get(i)? as usize) << 8) | *b.get(i + 1)? as usize)
    };
    // record header (5), handshake type + length (4), version (2), random (32)
    if *b.get(5)? != 1 {
        return None;
    }
    let mut i = 5 + 4 + 2 + 32;
    i += 1 + *b.get(i)? as usize; // session id
    i += 2 + u16_at(i)?; // cipher suites
    i += 1 + *b.get(i)? as usize; // compression methods
    let end = i + 2 + u16_at(i)?;
    i += 2;
    while i + 4 <= end.min(b.len()) {
        let kind = u16_at(i)?;
        let len = u16_at(i + 2)?;
        if kind == 0 {
            // server_name: list length (2), name type (1), name length (2), name
            let name_len = u16_at(i + 4 + 3)?;
            let start = i + 4 + 5;
            let name = b.get(start..start + name_len)?;
            return std::str::from_utf8(name).ok().map(str::to_string);
        }
        i += 4 + len;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_described_without_secrets() {
        let (s, d) = describe(
            b"GET http://user:pw@api.example/v1/x?token=abc HTTP/1.1\r\nHost: api.example\r\n\r\n",
            "127.0.0.1:9",
        );
        assert_eq!(s, "GET http://api.example/v1/x");
        assert_eq!(d["method"], "GET");
        let (s, _) = describe(
            b"CONNECT api.example:443 HTTP/1.1\r\nHost: api.example:443\r\n\r\n",
            "127.0.0.1:9",
        );
        assert_eq!(s, "CONNECT api.example:443");
        let (s, d) = describe(
            b"POST /v1/deploy HTTP/1.1\r\nHost: 127.0.0.1:9\r\nAuthorization: Bearer x\r\n\r\n",
            "127.0.0.1:9",
        );
        assert_eq!(s, "POST http://canary/v1/deploy");
        assert_eq!(d["direct"], true);
        assert!(!d.to_string().contains("Bearer"));
        let (s, _) = describe(b"\x00\x01hello", "127.0.0.1:9");
        assert_eq!(s, r#"non-HTTP bytes b"\x00\x01hello""#);
        assert_eq!(describe(b"", "x").0, "connection closed without a request");
    }

    #[tokio::test]
    async fn connections_are_recorded_under_their_tag_and_refused() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let start = Instant::now();
        let recorder = Recorder::new(start);
        recorder.tag(crate::issue::Phase::Adversarial, "raw banner-same-line");
        let canary = Canary::start(recorder.clone(), start).await.unwrap();
        let ask = |request: &'static [u8]| {
            let authority = canary.authority();
            async move {
                let mut s = TcpStream::connect(authority).await.unwrap();
                s.write_all(request).await.unwrap();
                let mut reply = String::new();
                s.read_to_string(&mut reply).await.unwrap();
                reply
            }
        };
        let reply = ask(b"CONNECT api.example:443 HTTP/1.1\r\nHost: api.example:443\r\n\r\n").await;
        assert!(reply.starts_with("HTTP/1.1 403"), "{reply}");
        let reply = ask(
            b"POST http://api.example/v1/deploy?key=s3cret HTTP/1.1\r\nHost: api.example\r\n\r\n{}",
        )
        .await;
        assert!(
            reply.starts_with("HTTP/1.1 502") && reply.contains("not forwarded"),
            "{reply}"
        );
        canary.stop().await;
        let e = recorder.effects();
        let summaries: Vec<&str> = e.iter().map(|e| e.summary.as_str()).collect();
        assert_eq!(
            summaries,
            [
                "CONNECT api.example:443",
                "POST http://api.example/v1/deploy"
            ]
        );
        assert!(e.iter().all(|e| e.kind == EffectKind::Http
            && e.after == "raw banner-same-line"
            && e.phase == crate::issue::Phase::Adversarial));
    }

    #[test]
    fn a_tls_client_hello_names_its_server() {
        // A minimal ClientHello carrying SNI "api.example".
        let name = b"api.example";
        let mut sni = vec![0u8, 0];
        let list_len = (name.len() + 3) as u16;
        let ext_len = list_len + 2;
        sni.extend(ext_len.to_be_bytes());
        sni.extend(list_len.to_be_bytes());
        sni.push(0);
        sni.extend((name.len() as u16).to_be_bytes());
        sni.extend(name);
        let mut hello = vec![0x03, 0x03];
        hello.extend([0u8; 32]);
        hello.push(0); // session id
        hello.extend([0, 2, 0x13, 0x01]); // one cipher suite
        hello.extend([1, 0]); // compression
        hello.extend((sni.len() as u16).to_be_bytes());
        hello.extend(&sni);
        let mut record = vec![0x16, 3, 1];
        record.extend(((hello.len() + 4) as u16).to_be_bytes());
        record.push(1);
        record.extend([0, 0, 0]);
        record.extend(&hello);
        let (s, d) = describe(&record, "x");
        assert_eq!(
            s,
            "TLS handshake for api.example (HTTPS straight to the canary)"
        );
        assert_eq!(d["serverName"], "api.example");
    }
}
