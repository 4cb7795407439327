//! Pure checks: data observed by the probes → issues. No I/O, no clock.

pub mod adversarial;
pub mod buffering;
pub mod discover;
pub mod drift;
pub mod effects;
pub mod initialize;
pub mod lists;
pub mod notifications;
pub mod schema;
pub mod tool_result;
pub mod tools;
