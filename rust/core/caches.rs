//! The data caches the machine reports, read once a process: every size a
//! kernel derives from the caches (tiles, blocks, when to stream) starts
//! here, never from constants measured on one model.

use std::sync::OnceLock;

/// Sizes in bytes of the data caches Linux reports for CPU 0
/// (`/sys/devices/system/cpu/cpu0/cache/index*/`), `None` where it reports
/// none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caches {
    /// The first-level data cache.
    pub l1: Option<usize>,
    /// The second-level cache.
    pub l2: Option<usize>,
    /// The largest data or unified cache of any level (the last level's).
    pub largest: Option<usize>,
}

/// The caches the machine reports, read once a process.
pub fn reported() -> Caches {
    static CACHES: OnceLock<Caches> = OnceLock::new();
    *CACHES.get_or_init(|| {
        let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
        let read = |i: usize, what: &str| std::fs::read_to_string(dir.join(format!("index{i}/{what}"))).ok();
        let levels = (0..16).map_while(|i| {
            let (level, kind, size) = (read(i, "level")?, read(i, "type")?, read(i, "size")?);
            Some((level, kind, size))
        });
        of_entries(levels)
    })
}

/// Cache sizes to block work by, each level's reported size or, where the
/// machine reports none, a common one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// The first-level data cache; 32 KiB where unreported.
    pub l1: usize,
    /// The second-level cache; 1 MiB where unreported.
    pub l2: usize,
    /// The largest cache; 8 MiB where unreported.
    pub l3: usize,
}

/// The sizes kernels block their work by ([`Sizes`]).
pub fn sizes() -> Sizes {
    let c = reported();
    Sizes { l1: c.l1.unwrap_or(32 << 10), l2: c.l2.unwrap_or(1 << 20), l3: c.largest.unwrap_or(8 << 20) }
}

/// Bytes of the largest cache: [`Sizes::l3`], with its fallback where
/// the machine reports none.
pub fn largest() -> usize {
    sizes().l3
}

/// Bytes of data past which a pass over them streams what it writes (or,
/// for a matrix times a vector, fetches ahead what it reads): the largest
/// cache's, or eight second-level caches' where that is less. The largest
/// cache is often shared by many cores, other tenants' too, so that a
/// pass over more than that share writes lines that leave the cache before
/// anyone reads them. On an Intel Xeon of 2 MiB L2 and 480 MiB L3: float32
/// 4096x4096 times a vector (64 MiB), 0.80 -> 1.00 of numpy on one thread
/// (4 MiB was 5% slower streamed); a batch of 4096 transforms of 1024
/// complex64 points (64 MiB in and out), ~19.6 -> ~13.6 ms, where 256 of
/// them (2 MiB) streamed were a third slower.
pub fn streamed_past() -> usize {
    let s = sizes();
    s.l3.min(8 * s.l2)
}

/// The caches described by (level, type, size) entries as Linux writes
/// them ("2", "Unified", "2048K"); instruction caches and entries it does
/// not parse are left out.
fn of_entries(entries: impl Iterator<Item = (String, String, String)>) -> Caches {
    let mut c = Caches { l1: None, l2: None, largest: None };
    for (level, kind, size) in entries {
        let (Some(bytes), "Data" | "Unified") = (size_of(&size), kind.trim()) else { continue };
        match level.trim() {
            "1" => c.l1 = Some(bytes),
            "2" => c.l2 = Some(bytes),
            _ => {}
        }
        c.largest = c.largest.max(Some(bytes));
    }
    c
}

/// The bytes of a cache size as Linux writes it: `48K`, `2048K`, `32M`,
/// `4096`.
fn size_of(text: &str) -> Option<usize> {
    let t = text.trim();
    let (digits, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    let scale = match unit {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return None,
    };
    digits.parse::<usize>().ok()?.checked_mul(scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_linux_writes_them() {
        assert_eq!(size_of("48K\n"), Some(48 << 10));
        assert_eq!(size_of("491520K"), Some(491520 << 10));
        assert_eq!(size_of("32M"), Some(32 << 20));
        assert_eq!(size_of("1G"), Some(1 << 30));
        assert_eq!(size_of("4096"), Some(4096));
        assert_eq!(size_of("big"), None);
        assert_eq!(size_of("12X"), None);
    }

    #[test]
    fn levels_and_kinds_sorted_out() {
        let e = |l: &str, k: &str, s: &str| (l.to_string(), k.to_string(), s.to_string());
        let zen4 = [e("1", "Data", "32K"), e("1", "Instruction", "32K"), e("2", "Unified", "1024K"), e("3", "Unified", "32768K")];
        let c = of_entries(zen4.into_iter());
        assert_eq!(c, Caches { l1: Some(32 << 10), l2: Some(1 << 20), largest: Some(32 << 20) });
        // An instruction cache larger than the rest never counts.
        let odd = [e("1", "Instruction", "64M"), e("2", "Unified", "bad"), e("1", "Data", "48K")];
        assert_eq!(of_entries(odd.into_iter()), Caches { l1: Some(48 << 10), l2: None, largest: Some(48 << 10) });
        assert_eq!(of_entries(std::iter::empty()), Caches { l1: None, l2: None, largest: None });
    }

    #[test]
    fn this_machine_reports_sensible_sizes() {
        let c = reported();
        if let (Some(l1), Some(largest)) = (c.l1, c.largest) {
            assert!(l1 >= 4096 && largest >= l1, "{c:?}");
        }
        assert!(largest() >= 4096);
        let s = sizes();
        assert!(s.l1 <= s.l2 && s.l2 <= s.l3, "{s:?}");
    }
}
