//! `--shard K/N`: one of N deterministic, balanced slices of the servers of a run, for spreading
//! a registry over a CI matrix (GitHub Actions `strategy.matrix`, GitLab `parallel`): the CI runs
//! the shards, `mcp-stdio-guard merge` joins their JSON reports.
//!
//! The servers are ordered by a hash of their names (FNV-1a, 64 bits: the same on every machine
//! and every run), ties by name, and dealt out in turn: shard K gets positions K-1, K-1+N, ...
//! So the slices are stable when the list is reordered, no two shards hold the same server, all
//! of them together hold every server, and their sizes differ by at most one.

use serde_json::{Value, json};

/// Shard `index` (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

/// More shards than any CI matrix runs (GitHub allows 256 jobs per matrix).
pub const MAX_SHARDS: u32 = 1024;

impl Shard {
    /// Parses `K/N` (1 ≤ K ≤ N ≤ 1024); the error names the problem and the fix.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || {
            format!(
                "--shard {text:?} is not K/N: give this shard's number and the number of shards, e.g. --shard 2/4"
            )
        };
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let k: u32 = k.trim().parse().map_err(|_| bad())?;
        let n: u32 = n.trim().parse().map_err(|_| bad())?;
        if n == 0 || n > MAX_SHARDS {
            return Err(format!(
                "--shard {text}: the number of shards must be 1 to {MAX_SHARDS}"
            ));
        }
        if k == 0 || k > n {
            return Err(format!(
                "--shard {text}: the shard number must be 1 to {n} (shards are numbered from 1)"
            ));
        }
        Ok(Shard { index: k, count: n })
    }

    /// The positions (into `names`) of the servers this shard checks, in their original order.
    pub fn select(&self, names: &[&str]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..names.len()).collect();
        order.sort_by(|&a, &b| (fnv1a(names[a]), names[a], a).cmp(&(fnv1a(names[b]), names[b], b)));
        let mut mine: Vec<usize> = order
            .into_iter()
            .enumerate()
            .filter(|(rank, _)| *rank as u32 % self.count == self.index - 1)
            .map(|(_, at)| at)
            .collect();
        mine.sort_unstable();
        mine
    }

    /// The report's `shard` block: which shard, and where each of its servers stands in the
    /// whole list (so `merge` puts them back in the order one run would have).
    pub fn to_json(&self, positions: &[usize]) -> Value {
        json!({"index": self.index, "count": self.count, "positions": positions})
    }
}

/// FNV-1a, 64 bits: a fixed, portable hash (the standard library's is seeded per process).
pub fn fnv1a(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_specs_parse_or_name_the_fix() {
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 2, count: 4 }));
        for bad in ["", "2", "0/4", "5/4", "1/0", "a/b", "1/2000", "-1/3"] {
            let e = Shard::parse(bad).unwrap_err();
            assert!(e.contains("--shard"), "{bad}: {e}");
        }
    }

    #[test]
    fn fnv_is_the_published_function() {
        // Test vectors of the FNV reference (draft-eastlake-fnv).
        assert_eq!(fnv1a(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a("foobar"), 0x8594_4171_f739_67e8);
    }

    proptest::proptest! {
        /// Every server in exactly one shard, sizes within one of each other, the same slices
        /// whatever the order of the list, for N in 1..=8.
        #[test]
        fn shards_partition_and_balance(
            names in proptest::collection::btree_set("[a-z0-9 ./@-]{1,12}", 0..60),
            seed in 0u64..1000,
        ) {
            let names: Vec<String> = names.into_iter().collect();
            let mut shuffled = names.clone();
            // A deterministic reordering.
            shuffled.sort_by_key(|n| fnv1a(&format!("{seed}{n}")));
            for n in 1..=8u32 {
                let mut seen = std::collections::BTreeMap::new();
                let mut sizes = Vec::new();
                for k in 1..=n {
                    let shard = Shard { index: k, count: n };
                    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
                    let mine: Vec<&str> = shard.select(&refs).into_iter().map(|i| refs[i]).collect();
                    let other: Vec<&str> = shuffled.iter().map(String::as_str).collect();
                    let mut theirs: Vec<&str> = shard.select(&other).into_iter().map(|i| other[i]).collect();
                    let mut sorted = mine.clone();
                    sorted.sort_unstable();
                    theirs.sort_unstable();
                    proptest::prop_assert_eq!(&sorted, &theirs, "reordering moved servers");
                    for name in &mine {
                        *seen.entry(name.to_string()).or_insert(0) += 1;
                    }
                    sizes.push(mine.len());
                }
                proptest::prop_assert_eq!(seen.len(), names.len());
                proptest::prop_assert!(seen.values().all(|&c| c == 1));
                let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
                proptest::prop_assert!(hi - lo <= 1, "sizes {:?}", sizes);
            }
        }
    }
}
