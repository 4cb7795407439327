//! What the CI renderers (SARIF, JUnit, GitHub) need beyond the report model: the invocation
//! (times, exit code), where files are ([`super::locate::Sources`]), which checks ran for a
//! server and which rules a scan applied (a test that did not run is reported as skipped, a rule
//! the scan did not apply is not a test at all).

use super::{ScanSection, locate};
use crate::catalog::Rule;
use crate::exit::Exit;
use std::time::SystemTime;

/// One invocation of the guard, as CI reports record it.
#[derive(Debug, Clone, Copy)]
pub struct Invocation {
    pub start: SystemTime,
    pub end: SystemTime,
    /// The exit code this invocation ends with.
    pub exit: Exit,
}

/// What the CI renderers (SARIF, JUnit, GitHub) need beyond the report: where files are (looked
/// up once by [`locate::Sources::gather`]) and the invocation's timing and exit code.
#[derive(Debug, Clone)]
pub struct CiContext {
    pub sources: locate::Sources,
    pub invocation: Invocation,
}

/// UTC time as RFC 3339 with milliseconds (`2026-01-31T12:00:00.000Z`), without a time crate.
pub fn utc_timestamp(t: SystemTime) -> String {
    let d = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

impl ScanSection {
    /// The rules this scan applied, in catalogue order.
    pub fn rules_applied(&self) -> Vec<&'static Rule> {
        crate::scan::rules()
            .filter(|r| self.rules.is_empty() || self.rules.contains(r))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        let at = |secs: u64, millis: u64| {
            utc_timestamp(
                SystemTime::UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis),
            )
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400, 0), "2000-02-29T00:00:00.000Z");
        assert_eq!(at(1_700_000_000, 123), "2023-11-14T22:13:20.123Z");
        assert_eq!(at(4_107_542_399, 999), "2100-02-28T23:59:59.999Z");
    }
}
