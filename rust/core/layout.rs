//! Array layouts (shape, strides and offset, in elements) and views of memory
//! through them, checked against their buffer's extent before any access.

use crate::core::dtype::Dtype;

/// A layout: the dtype, the extent of each axis, the step between
/// neighbours along each axis and the first element's index, all in elements.
/// Strides may be 0 (broadcast) or negative.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub dtype: Dtype,
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
    pub offset: usize,
}

impl Layout {
    /// The C-contiguous layout of `shape` from element 0.
    pub fn contiguous(dtype: Dtype, shape: &[usize]) -> Layout {
        let mut strides = vec![0isize; shape.len()];
        let mut step = 1isize;
        for (s, &n) in strides.iter_mut().zip(shape).rev() {
            *s = step;
            step = step.saturating_mul(n.max(1) as isize);
        }
        Layout { dtype, shape: shape.to_vec(), strides, offset: 0 }
    }

    /// Number of elements the layout holds.
    pub fn size(&self) -> usize {
        self.shape.iter().product()
    }

    /// Least and greatest element index the layout reaches, or `None` when it
    /// holds no element. Computed without overflow (an `Err` names the axis
    /// whose step overflows).
    pub fn span(&self) -> Result<Option<(i128, i128)>, String> {
        if self.shape.contains(&0) {
            return Ok(None);
        }
        let mut lo = self.offset as i128;
        let mut hi = lo;
        for (axis, (&n, &s)) in self.shape.iter().zip(&self.strides).enumerate() {
            let reach = (n as i128 - 1)
                .checked_mul(s as i128)
                .ok_or_else(|| format!("axis {axis}'s extent times its stride overflows"))?;
            if reach < 0 {
                lo += reach;
            } else {
                hi += reach;
            }
        }
        Ok(Some((lo, hi)))
    }

    /// Checks that every element lies inside a buffer of `extent` elements.
    pub fn check_within(&self, extent: usize) -> Result<(), String> {
        if self.shape.len() != self.strides.len() {
            return Err(format!(
                "{} axes but {} strides",
                self.shape.len(),
                self.strides.len()
            ));
        }
        let size = self.shape.iter().try_fold(1usize, |a, &n| a.checked_mul(n));
        if size.is_none_or(|s| s > isize::MAX as usize) && !self.shape.contains(&0) {
            return Err(format!("holds more elements than an index can count ({:?})", self.shape));
        }
        if let Some((lo, hi)) = self.span()? {
            if lo < 0 || hi >= extent as i128 {
                return Err(format!(
                    "reaches elements {lo} to {hi} of a buffer of {extent} {} elements",
                    self.dtype.name()
                ));
            }
        }
        Ok(())
    }
}

/// Memory that a kernel reads or writes: a base pointer and a length in bytes.
#[derive(Clone, Copy, Debug)]
pub struct Memory {
    pub base: *mut u8,
    pub bytes: usize,
}

// SAFETY: `Memory` is an address range; the door (`crate::core::door`) keeps
// concurrent calls from writing what another reads or writes, and each kernel
// splits its own writes among threads so that no two threads write one byte.
unsafe impl Send for Memory {}
// SAFETY: as for `Send`.
unsafe impl Sync for Memory {}

impl Memory {
    /// The elements of `dtype` the memory holds. (Every dtype's width is a
    /// power of two, so a shift divides by it: a division by a width not
    /// known when compiled took tens of cycles, several times a small call.)
    pub fn extent(&self, dtype: Dtype) -> usize {
        self.bytes.saturating_mul(8) >> dtype.bits().trailing_zeros()
    }
}

/// Whether two lists of extents or steps are equal, compared element by
/// element. Slices' `==` calls `memcmp` even on empty ones, whose pointer
/// is dangling; glibc's AVX-512 `memcmp` reads it by a masked load, which
/// costs a microcode assist of a few hundred cycles: a 0-d array's shape
/// compared so took about a twentieth of a whole small reduction.
pub fn same_dims<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// Whether two inclusive byte ranges (as [`View::byte_range`] gives them)
/// share a byte.
pub fn ranges_meet(a: Option<(usize, usize)>, b: Option<(usize, usize)>) -> bool {
    matches!((a, b), (Some((a0, a1)), Some((b0, b1))) if a0 <= b1 && b0 <= a1)
}

/// A layout over memory whose extent has been checked to hold it.
#[derive(Clone, Debug)]
pub struct View {
    pub layout: Layout,
    pub memory: Memory,
}

impl View {
    /// A view of `layout` over `memory`, refused when an element of it lies
    /// outside the memory.
    pub fn new(layout: Layout, memory: Memory) -> Result<View, String> {
        layout.check_within(memory.extent(layout.dtype))?;
        Ok(View { layout, memory })
    }

    /// The range of byte addresses the view's elements touch, inclusive, or
    /// `None` when it holds no element.
    pub fn byte_range(&self) -> Option<(usize, usize)> {
        self.byte_range_of(self.layout.span().ok().flatten())
    }

    /// [`View::byte_range`] from the layout's span (`Layout::span`), known.
    pub fn byte_range_of(&self, span: Option<(i128, i128)>) -> Option<(usize, usize)> {
        let (lo, hi) = span?;
        let bits = self.layout.dtype.bits() as i128;
        let base = self.memory.base as usize;
        Some((base + (lo * bits / 8) as usize, base + ((hi + 1) * bits - 1) as usize / 8))
    }

    /// Whether two views touch a common byte.
    pub fn overlaps(&self, other: &View) -> bool {
        ranges_meet(self.byte_range(), other.byte_range())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lay(shape: &[usize], strides: &[isize], offset: usize) -> Layout {
        Layout { dtype: Dtype::Float32, shape: shape.to_vec(), strides: strides.to_vec(), offset }
    }

    #[test]
    fn contiguous_strides() {
        assert_eq!(Layout::contiguous(Dtype::Int8, &[2, 3, 4]).strides, vec![12, 4, 1]);
        assert_eq!(Layout::contiguous(Dtype::Int8, &[]).strides, Vec::<isize>::new());
    }

    #[test]
    fn spans_of_awkward_layouts() {
        assert_eq!(lay(&[3, 4], &[4, 1], 0).span().unwrap(), Some((0, 11)));
        assert_eq!(lay(&[3, 4], &[-4, 1], 8).span().unwrap(), Some((0, 11)));
        assert_eq!(lay(&[3, 4], &[0, -1], 3).span().unwrap(), Some((0, 3)));
        assert_eq!(lay(&[0, 4], &[4, 1], 99).span().unwrap(), None);
        assert_eq!(lay(&[], &[], 5).span().unwrap(), Some((5, 5)));
        assert!(lay(&[3], &[isize::MAX], 0).span().is_ok());
        assert!(lay(&[usize::MAX], &[isize::MAX], 0).check_within(usize::MAX).is_err());
        assert!(lay(&[1 << 40, 1 << 40], &[0, 0], 0).check_within(1).unwrap_err().contains("elements"));
    }

    #[test]
    fn extent_checks_refuse_every_escape() {
        assert!(lay(&[3, 4], &[4, 1], 0).check_within(12).is_ok());
        assert!(lay(&[3, 4], &[4, 1], 1).check_within(12).is_err());
        assert!(lay(&[3, 4], &[-4, 1], 7).check_within(12).is_err());
        assert!(lay(&[2], &[1, 1], 0).check_within(12).is_err());
        assert!(lay(&[0], &[1], 1000).check_within(0).is_ok());
        assert!(lay(&[], &[], 0).check_within(0).is_err());
    }

    #[test]
    fn sub_byte_extents_and_ranges() {
        let m = Memory { base: 0x1000 as *mut u8, bytes: 3 };
        assert_eq!(m.extent(Dtype::Bit), 24);
        assert_eq!(m.extent(Dtype::Int4), 6);
        let v = View::new(Layout::contiguous(Dtype::Int4, &[3]), m).unwrap();
        assert_eq!(v.byte_range(), Some((0x1000, 0x1001)));
        let w = View::new(Layout { offset: 3, ..Layout::contiguous(Dtype::Int4, &[3]) }, m).unwrap();
        assert_eq!(w.byte_range(), Some((0x1001, 0x1002)));
        assert!(v.overlaps(&w));
        assert!(View::new(Layout::contiguous(Dtype::Int4, &[7]), m).is_err());
    }
}
