//! `partialFingerprints.primaryLocationLineHash`, computed the way GitHub's SARIF upload computes
//! it when a result has none, so that alerts keep their identity across commits whether or not
//! the upload step fills fingerprints in itself.
//!
//! The algorithm (GitHub's `codeql-action`, `src/fingerprints.ts`, studied and re-implemented
//! here; its published test vectors are the unit tests below):
//!
//! - The file is decoded as UTF-8 (invalid sequences become U+FFFD) and walked as UTF-16 code
//!   units, as JavaScript's `charCodeAt` sees them.
//! - Spaces and tabs are skipped everywhere; `\r\n` and a lone `\r` both become `\n`.
//! - A rolling polynomial hash over a window of the last 100 kept code units, base 37, in
//!   wrapping 64-bit arithmetic: `h = 37·h + c − 37^100·c_out`.
//! - The hash of line *n* is the rolling hash once the window holds the 100 code units starting
//!   at that line's first kept character. After the last character, one `0xFFFF` code unit (end
//!   of file) and then zeros pad the window, so short files and the last lines get hashes too
//!   (and a file ending in a newline has one more, empty, line).
//! - The value is the unsigned 64-bit hash in lowercase hexadecimal without leading zeros,
//!   followed by `:k`, where *k* counts how many earlier lines of the file had the same hash
//!   (1 for the first), so identical lines stay distinct.
//!
//! The upload only fingerprints results whose primary location has a `region.startLine` and a
//! file it can read inside the checkout; the SARIF renderer does the same.

const BLOCK_SIZE: usize = 100;
const MOD: u64 = 37;
const TAB: u16 = b'\t' as u16;
const SPACE: u16 = b' ' as u16;
const LF: u16 = b'\n' as u16;
const CR: u16 = b'\r' as u16;
const EOF: u16 = 0xFFFF;

/// The `primaryLocationLineHash` of every line of `bytes`, index 0 for line 1.
pub fn line_hashes(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut hasher = Hasher::new();
    for unit in text.encode_utf16() {
        hasher.push(unit);
    }
    hasher.finish()
}

/// The hash of one line (1-based), if the file has that line.
pub fn line_hash(bytes: &[u8], line: u32) -> Option<String> {
    let index = usize::try_from(line).ok()?.checked_sub(1)?;
    line_hashes(bytes).into_iter().nth(index)
}

struct Hasher {
    window: [u16; BLOCK_SIZE],
    /// The line that starts at this window slot, if one does.
    line_at: [Option<u32>; BLOCK_SIZE],
    hash: u64,
    first_mod: u64,
    index: usize,
    line: u32,
    line_start: bool,
    prev_cr: bool,
    counts: std::collections::HashMap<u64, u32>,
    out: Vec<String>,
}

impl Hasher {
    fn new() -> Hasher {
        let mut first_mod: u64 = 1;
        for _ in 0..BLOCK_SIZE {
            first_mod = first_mod.wrapping_mul(MOD);
        }
        Hasher {
            window: [0; BLOCK_SIZE],
            line_at: [None; BLOCK_SIZE],
            hash: 0,
            first_mod,
            index: 0,
            line: 0,
            line_start: true,
            prev_cr: false,
            counts: std::collections::HashMap::new(),
            out: Vec::new(),
        }
    }

    fn emit(&mut self) {
        let count = self.counts.entry(self.hash).or_insert(0);
        *count += 1;
        // Lines start at increasing positions, so they come out in order.
        debug_assert_eq!(self.line_at[self.index], Some(self.out.len() as u32 + 1));
        self.out.push(format!("{:x}:{count}", self.hash));
        self.line_at[self.index] = None;
    }

    fn update(&mut self, unit: u16) {
        let leaving = self.window[self.index];
        self.window[self.index] = unit;
        self.hash = MOD
            .wrapping_mul(self.hash)
            .wrapping_add(u64::from(unit))
            .wrapping_sub(self.first_mod.wrapping_mul(u64::from(leaving)));
        self.index = (self.index + 1) % BLOCK_SIZE;
    }

    fn push(&mut self, unit: u16) {
        if unit == SPACE || unit == TAB || (self.prev_cr && unit == LF) {
            self.prev_cr = false;
            return;
        }
        let unit = if unit == CR {
            self.prev_cr = true;
            LF
        } else {
            self.prev_cr = false;
            unit
        };
        if self.line_at[self.index].is_some() {
            self.emit();
        }
        if self.line_start {
            self.line_start = false;
            self.line += 1;
            self.line_at[self.index] = Some(self.line);
        }
        if unit == LF {
            self.line_start = true;
        }
        self.update(unit);
    }

    fn finish(mut self) -> Vec<String> {
        self.push(EOF);
        for _ in 0..BLOCK_SIZE {
            if self.line_at[self.index].is_some() {
                self.emit();
            }
            self.update(0);
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expected values are the test vectors published with the upload action's own
    /// implementation (`src/fingerprints.test.ts` of github/codeql-action).
    fn check(input: &str, expected: &[&str]) {
        assert_eq!(line_hashes(input.as_bytes()), expected, "input {input:?}");
    }

    #[test]
    fn empty_file_has_one_line() {
        check("", &["c129715d7a2bc9a3:1"]);
    }

    #[test]
    fn spaces_and_tabs_are_ignored() {
        check(
            " a\nb\n  \t\tc\n d",
            &[
                "271789c17abda88f:1",
                "54703d4cd895b18:1",
                "180aee12dab6264:1",
                "a23a3dc5e078b07b:1",
            ],
        );
        check(
            " hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End",
            &[
                "8b7cf3e952e7aeb2:1",
                "b1ae1287ec4718d9:1",
                "bff680108adb0fcc:1",
                "c6805c5e1288b612:1",
                "b86d3392aea1be30:1",
                "e6ceba753e1a442:1",
            ],
        );
    }

    #[test]
    fn every_newline_convention_hashes_alike() {
        let expected = [
            "e9496ae3ebfced30:1",
            "fb7c023a8b9ccb3f:1",
            "ce8ba1a563dcdaca:1",
            "e20e36e16fcb0cc8:1",
            "b3edc88f2938467e:1",
            "c8e28b0b4002a3a0:1",
            "c129715d7a2bc9a3:1",
        ];
        for input in [
            " hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End\n",
            " hello; \t\nworld!!!\r\r\r  \t\tGreetings\r End\r",
            " hello; \t\r\nworld!!!\r\n\r\n\r\n  \t\tGreetings\r\n End\r\n",
            " hello; \t\nworld!!!\r\n\n\r  \t\tGreetings\r End\r\n",
        ] {
            check(input, &expected);
        }
    }

    #[test]
    fn identical_lines_are_counted_apart() {
        check(
            &"Lorem ipsum dolor sit amet.\n".repeat(10),
            &[
                "a7f2ff13bc495cf2:1",
                "a7f2ff13bc495cf2:2",
                "a7f2ff13bc495cf2:3",
                "a7f2ff13bc495cf2:4",
                "a7f2ff13bc495cf2:5",
                "a7f2ff13bc495cf2:6",
                "a7f2ff1481e87703:1",
                "a9cf91f7bbf1862b:1",
                "55ec222b86bcae53:1",
                "cc97dc7b1d7d8f7b:1",
                "c129715d7a2bc9a3:1",
            ],
        );
    }

    #[test]
    fn a_program_hashes_line_by_line() {
        check(
            "x = 2\nx = 1\nprint(x)\nx = 3\nprint(x)\nx = 4\nprint(x)\n",
            &[
                "e54938cc54b302f1:1",
                "bb609acbe9138d60:1",
                "1131fd5871777f34:1",
                "5c482a0f8b35ea28:1",
                "54517377da7028d2:1",
                "2c644846cb18d53e:1",
                "f1b89f20de0d133:1",
                "c129715d7a2bc9a3:1",
            ],
        );
    }

    #[test]
    fn one_line_is_looked_up_by_number() {
        assert_eq!(
            line_hash(b" a\nb\n", 2).as_deref(),
            line_hashes(b" a\nb\n").get(1).map(String::as_str)
        );
        assert_eq!(line_hash(b"a", 0), None);
        assert_eq!(line_hash(b"a", 5), None);
    }
}
