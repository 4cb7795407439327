//! stdout bytes → [`RawFrame`]s, split on `b'\n'` exactly as bytes.
//!
//! The framer never decodes and never holds more than the line limit of one line in memory: past
//! the limit it stops buffering and only counts bytes until the next newline. It also enforces the
//! total-output limit. Everything about a line's *content* (UTF-8, BOM, CR, JSON) is judged later,
//! in `frame.rs`; the framer only knows where lines start and end.

use std::time::Duration;

/// One line of stdout, as bytes, without its terminating `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawFrame {
    /// 0-based index of the frame in the stream.
    pub seq: u64,
    /// 1-based line number.
    pub line: u64,
    /// Offset of the line's first byte from the start of stdout.
    pub byte_offset: u64,
    /// When the line was completed, relative to the start of the run.
    pub at: Duration,
    /// The line's bytes (at most the line limit; see `truncated`).
    pub bytes: Vec<u8>,
    /// The line's full length in bytes, without the newline.
    pub len: u64,
    /// False when stdout ended before a newline (the unterminated tail).
    pub terminated: bool,
    /// True when the line was longer than the limit and `bytes` holds only its start.
    pub truncated: bool,
}

/// Limits the framer enforces.
#[derive(Debug, Clone, Copy)]
pub struct FramerLimits {
    pub max_line_bytes: u64,
    pub max_total_bytes: u64,
}

/// Splits a byte stream into frames.
#[derive(Debug)]
pub struct Framer {
    limits: FramerLimits,
    buf: Vec<u8>,
    line_len: u64,
    line_start: u64,
    total: u64,
    next_seq: u64,
    over_total: bool,
}

/// What pushing a chunk produced besides frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushOutcome {
    Continue,
    /// The total limit was crossed inside this chunk; nothing after the limit was framed.
    TotalLimitExceeded,
}

impl Framer {
    pub fn new(limits: FramerLimits) -> Framer {
        Framer {
            limits,
            buf: Vec::new(),
            line_len: 0,
            line_start: 0,
            total: 0,
            next_seq: 0,
            over_total: false,
        }
    }

    /// Total bytes accepted so far (stops growing at the total limit).
    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    /// Lines completed so far.
    pub fn lines(&self) -> u64 {
        self.next_seq
    }

    /// Feeds a chunk of stdout; completed lines are appended to `out`.
    pub fn push(&mut self, mut chunk: &[u8], at: Duration, out: &mut Vec<RawFrame>) -> PushOutcome {
        if self.over_total {
            return PushOutcome::TotalLimitExceeded;
        }
        let room = self.limits.max_total_bytes.saturating_sub(self.total);
        let mut outcome = PushOutcome::Continue;
        if chunk.len() as u64 > room {
            chunk = &chunk[..room as usize];
            self.over_total = true;
            outcome = PushOutcome::TotalLimitExceeded;
        }
        self.total += chunk.len() as u64;
        while !chunk.is_empty() {
            match memchr::memchr(b'\n', chunk) {
                Some(pos) => {
                    self.append(&chunk[..pos]);
                    out.push(self.take_line(at, true));
                    self.line_start += 1; // the newline itself
                    chunk = &chunk[pos + 1..];
                }
                None => {
                    self.append(chunk);
                    break;
                }
            }
        }
        outcome
    }

    /// Ends the stream: the unterminated tail, if any, becomes a frame with `terminated: false`.
    pub fn finish(&mut self, at: Duration) -> Option<RawFrame> {
        if self.line_len == 0 {
            return None;
        }
        Some(self.take_line(at, false))
    }

    /// The partial line, if it is already over the line limit: at the total limit the guard stops
    /// reading, and a line that never ended must still be reported as too large.
    pub fn take_oversized_tail(&mut self, at: Duration) -> Option<RawFrame> {
        if self.line_len <= self.limits.max_line_bytes {
            return None;
        }
        Some(self.take_line(at, false))
    }

    /// True when a partial line is buffered (bytes written without a newline yet).
    pub fn has_partial_line(&self) -> bool {
        self.line_len > 0
    }

    /// The partial line: its line number and its length so far (`None` when there is none).
    pub fn partial(&self) -> Option<(u64, u64)> {
        (self.line_len > 0).then_some((self.next_seq + 1, self.line_len))
    }

    /// A copy of the partial line as an unterminated frame, without taking it: the line the
    /// framer will give when its newline (or EOF) comes (same `seq`, `line`, `byte_offset`).
    pub fn peek_partial(&self, at: Duration) -> Option<RawFrame> {
        (self.line_len > 0).then(|| RawFrame {
            seq: self.next_seq,
            line: self.next_seq + 1,
            byte_offset: self.line_start,
            at,
            truncated: self.line_len > self.buf.len() as u64,
            bytes: self.buf.clone(),
            len: self.line_len,
            terminated: false,
        })
    }

    fn append(&mut self, bytes: &[u8]) {
        let keep = self
            .limits
            .max_line_bytes
            .saturating_sub(self.buf.len() as u64);
        let take = (bytes.len() as u64).min(keep) as usize;
        self.buf.extend_from_slice(&bytes[..take]);
        self.line_len += bytes.len() as u64;
    }

    fn take_line(&mut self, at: Duration, terminated: bool) -> RawFrame {
        let frame = RawFrame {
            seq: self.next_seq,
            line: self.next_seq + 1,
            byte_offset: self.line_start,
            at,
            truncated: self.line_len > self.buf.len() as u64,
            bytes: std::mem::take(&mut self.buf),
            len: self.line_len,
            terminated,
        };
        self.next_seq += 1;
        self.line_start += self.line_len;
        self.line_len = 0;
        frame
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framer(line: u64, total: u64) -> Framer {
        Framer::new(FramerLimits {
            max_line_bytes: line,
            max_total_bytes: total,
        })
    }

    fn feed(f: &mut Framer, chunks: &[&[u8]]) -> Vec<RawFrame> {
        let mut out = Vec::new();
        for c in chunks {
            f.push(c, Duration::ZERO, &mut out);
        }
        out
    }

    #[test]
    fn an_endless_line_cut_by_the_total_limit_is_still_too_large() {
        let mut f = framer(4, 10);
        let mut out = Vec::new();
        assert_eq!(
            f.push(b"ok\nxxxxxxxxxxxx", Duration::ZERO, &mut out),
            PushOutcome::TotalLimitExceeded
        );
        assert_eq!(out.len(), 1);
        let tail = f
            .take_oversized_tail(Duration::ZERO)
            .expect("over the line limit");
        assert_eq!((tail.line, tail.byte_offset, tail.len), (2, 3, 7));
        assert!(tail.truncated && !tail.terminated);
        assert_eq!(tail.bytes, b"xxxx");
        // A short partial line is not a finding of its own.
        let mut f = framer(64, 10);
        f.push(b"ok\nxxxxxxxxxxxx", Duration::ZERO, &mut out);
        assert!(f.take_oversized_tail(Duration::ZERO).is_none());
    }

    #[test]
    fn splits_on_newline_across_chunks_with_offsets() {
        let mut f = framer(1024, 1 << 20);
        let frames = feed(&mut f, &[b"ab", b"c\nde", b"\n\nf"]);
        let got: Vec<_> = frames
            .iter()
            .map(|fr| (fr.line, fr.byte_offset, fr.bytes.clone(), fr.terminated))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, 0, b"abc".to_vec(), true),
                (2, 4, b"de".to_vec(), true),
                (3, 7, b"".to_vec(), true),
            ]
        );
        let tail = f.finish(Duration::ZERO).unwrap();
        assert_eq!(
            (tail.line, tail.byte_offset, tail.bytes, tail.terminated),
            (4, 8, b"f".to_vec(), false)
        );
        assert!(f.finish(Duration::ZERO).is_none());
    }

    #[test]
    fn stops_buffering_at_the_line_limit_but_counts_the_whole_line() {
        let mut f = framer(4, 1 << 20);
        let frames = feed(&mut f, &[b"0123456789", b"abc\nok\n"]);
        assert_eq!(frames[0].bytes, b"0123");
        assert_eq!(frames[0].len, 13);
        assert!(frames[0].truncated);
        assert_eq!(frames[1].byte_offset, 14);
        assert!(!frames[1].truncated);
    }

    #[test]
    fn total_limit_cuts_the_stream() {
        let mut f = framer(1024, 5);
        let mut out = Vec::new();
        assert_eq!(
            f.push(b"ab\ncd", Duration::ZERO, &mut out),
            PushOutcome::Continue
        );
        assert_eq!(
            f.push(b"e\nfg\n", Duration::ZERO, &mut out),
            PushOutcome::TotalLimitExceeded
        );
        assert_eq!(out.len(), 1);
        assert_eq!(f.total_bytes(), 5);
        assert_eq!(
            f.push(b"x\n", Duration::ZERO, &mut out),
            PushOutcome::TotalLimitExceeded
        );
    }

    #[test]
    fn no_byte_is_lost_or_duplicated() {
        let input: Vec<u8> = (0..5000u32)
            .map(|i| if i % 37 == 0 { b'\n' } else { (i % 251) as u8 })
            .collect();
        for chunk_size in [1, 2, 7, 64, 5000] {
            let mut f = framer(1 << 20, 1 << 20);
            let mut out = Vec::new();
            for c in input.chunks(chunk_size) {
                f.push(c, Duration::ZERO, &mut out);
            }
            out.extend(f.finish(Duration::ZERO));
            let mut rebuilt = Vec::new();
            for fr in &out {
                assert_eq!(fr.byte_offset as usize, rebuilt.len());
                rebuilt.extend_from_slice(&fr.bytes);
                if fr.terminated {
                    rebuilt.push(b'\n');
                }
            }
            assert_eq!(rebuilt, input, "chunk size {chunk_size}");
        }
    }
}
