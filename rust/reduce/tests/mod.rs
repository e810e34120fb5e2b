//! Tests: slow references written from the spec's words, compared bit for
//! bit with the fast code, and bounds against double-double references.

mod bench;
mod data;
mod dd;
mod extremes;
mod passes;
mod reference;
mod scans;
mod stats;
mod sums;
