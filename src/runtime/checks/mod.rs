//! Pure checks: data observed by the probes → issues. No I/O, no clock.

pub mod initialize;
