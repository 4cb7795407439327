//! The reference's profiles: deterministic presets that explicit flags narrow or deepen. What
//! each profile changes is the settings table's `profiles` column ([`super::table`]).

/// A preset of defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Profile {
    /// Explicit flags and the defaults (capability probes on).
    #[default]
    Custom,
    /// The handshake (and explicit requests) only: no capability probes.
    Smoke,
    /// Capability probes and two runs for cold/warm drift.
    Registry,
    /// JSON output; static-scan findings fail.
    Ci,
    /// `ci` + `registry` + every adversarial probe.
    Strict,
}

impl Profile {
    pub const NAMES: [&str; 5] = ["custom", "smoke", "registry", "ci", "strict"];

    pub fn parse(name: &str) -> Option<Profile> {
        Some(match name {
            "custom" => Profile::Custom,
            "smoke" => Profile::Smoke,
            "registry" => Profile::Registry,
            "ci" => Profile::Ci,
            "strict" => Profile::Strict,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Custom => "custom",
            Profile::Smoke => "smoke",
            Profile::Registry => "registry",
            Profile::Ci => "ci",
            Profile::Strict => "strict",
        }
    }
}
