//! Padded loads: an operand padded per axis (before and after, with a fill)
//! and then read through windows (size, stride and dilation per axis, the
//! taps appended as trailing axes), from one padded copy the call holds.
//!
//! The copy is contiguous but for the axes the operand broadcasts and the
//! pad leaves alone, which it holds at one element (stride 0 in the view).

use crate::core::layout::View;

/// A window along one axis: `size` taps, `stride` elements between
/// neighbouring windows, `dilation` elements between neighbouring taps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub size: usize,
    pub stride: usize,
    pub dilation: usize,
}

/// A pad: per axis of the operand, elements before and after, an optional
/// window; and the fill, a float64 cast into the operand's dtype as Cast
/// casts it.
#[derive(Clone, Debug, PartialEq)]
pub struct Pad {
    pub before: Vec<usize>,
    pub after: Vec<usize>,
    pub windows: Vec<Option<Window>>,
    pub fill: f64,
}

impl Pad {
    /// The shape a load by this pad of an operand of `shape` has: each axis
    /// padded, then windowed axes counted in windows, and one trailing axis
    /// of taps per windowed axis, in axis order. Refused where the pad does
    /// not fit the operand's rank or a window does not fit its padded axis.
    pub fn shape(&self, shape: &[usize]) -> Result<Vec<usize>, String> {
        let r = shape.len();
        if self.before.len() != r || self.after.len() != r || !(self.windows.is_empty() || self.windows.len() == r) {
            return Err(format!(
                "a pad of {} befores, {} afters and {} windows for an operand of rank {r}",
                self.before.len(),
                self.after.len(),
                self.windows.len()
            ));
        }
        let mut out = Vec::with_capacity(2 * r);
        let mut taps = Vec::new();
        for (a, &extent) in shape.iter().enumerate() {
            let p = extent
                .checked_add(self.before[a])
                .and_then(|x| x.checked_add(self.after[a]))
                .ok_or_else(|| format!("axis {a}'s padded extent overflows"))?;
            match self.windows.get(a).copied().flatten() {
                None => out.push(p),
                Some(w) => {
                    if w.size == 0 || w.stride == 0 || w.dilation == 0 {
                        return Err(format!("axis {a}'s window has a size, stride or dilation of 0"));
                    }
                    let span = (w.size - 1)
                        .checked_mul(w.dilation)
                        .and_then(|x| x.checked_add(1))
                        .ok_or_else(|| format!("axis {a}'s window span overflows"))?;
                    if span > p {
                        return Err(format!("axis {a}'s window spans {span} of a padded extent of {p}"));
                    }
                    out.push((p - span) / w.stride + 1);
                    taps.push(w.size);
                }
            }
        }
        out.extend(taps);
        Ok(out)
    }

    /// Whether axis `a` of `v` is held at one element in the copy: the
    /// operand broadcasts it and the pad leaves it alone.
    pub(crate) fn held(&self, v: &View, a: usize) -> bool {
        v.layout.strides[a] == 0
            && self.before[a] == 0
            && self.after[a] == 0
            && self.windows.get(a).copied().flatten().is_none()
    }

    /// Bytes of the copy of `v` this pad makes.
    pub fn copy_bytes(&self, v: &View) -> usize {
        let elements: usize = (0..v.layout.shape.len())
            .map(|a| if self.held(v, a) { 1 } else { v.layout.shape[a] + self.before[a] + self.after[a] })
            .product();
        (elements * v.layout.dtype.bits()).div_ceil(8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(size: usize, stride: usize, dilation: usize) -> Option<Window> {
        Some(Window { size, stride, dilation })
    }

    #[test]
    fn shapes() {
        let p = Pad { before: vec![1, 0], after: vec![1, 2], windows: vec![], fill: 0.0 };
        assert_eq!(p.shape(&[3, 4]).unwrap(), vec![5, 6]);
        let p = Pad { before: vec![1, 0], after: vec![1, 0], windows: vec![w(3, 1, 1), None], fill: 0.0 };
        assert_eq!(p.shape(&[3, 4]).unwrap(), vec![3, 4, 3]);
        let p = Pad { before: vec![0], after: vec![0], windows: vec![w(2, 2, 3)], fill: 0.0 };
        assert_eq!(p.shape(&[10]).unwrap(), vec![4, 2]);
        assert!(p.shape(&[3]).unwrap_err().contains("spans 4"));
        assert!(p.shape(&[3, 3]).unwrap_err().contains("rank 2"));
        let z = Pad { before: vec![0], after: vec![0], windows: vec![w(0, 1, 1)], fill: 0.0 };
        assert!(z.shape(&[3]).is_err());
    }
}
