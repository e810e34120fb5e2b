//! Reductions and scans in lane order (the spec's Lane order, Reductions and scans): under construction.
