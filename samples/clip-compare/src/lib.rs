//! clip-compare: ozz-animation's clip compression beside vkskin's clips on
//! the same clips, by one error metric (see `metric`), with the timings of
//! both samplers. `main.rs` runs it; the modules are a library so their
//! tests run with `cargo test -p clip-compare`.

pub mod chart;
pub mod export;
pub mod interchange;
pub mod metric;
pub mod report;
pub mod sets;
pub mod timing;
