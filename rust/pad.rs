//! Padded loads: an operand padded per axis (before and after, with a fill)
//! and then read through windows (size, stride and dilation per axis, the
//! taps appended as trailing axes), from one padded copy the call holds.
//!
//! The copy is contiguous but for the axes the operand broadcasts and the
//! pad leaves alone, which it holds at one element (stride 0 in the view).

use crate::call::Call;
use crate::dtype::Dtype;
use crate::layout::{Layout, Memory, View};
use crate::map;
use crate::prog::{Constant, Node, Prog};

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
    fn held(&self, v: &View, a: usize) -> bool {
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

    /// The padded copy of `v`, filled, the operand copied into it, and the
    /// windowed view of it the loop reads. The shape must have been checked
    /// by [`Pad::shape`].
    pub fn materialize(&self, v: &View) -> Result<(View, Vec<u64>), String> {
        let d = v.layout.dtype;
        let r = v.layout.shape.len();
        let copy_shape: Vec<usize> = (0..r)
            .map(|a| if self.held(v, a) { 1 } else { v.layout.shape[a] + self.before[a] + self.after[a] })
            .collect();
        let whole = Layout::contiguous(d, &copy_shape);
        let bytes = (whole.size() * d.bits()).div_ceil(8);
        let mut buf = vec![0u64; bytes.div_ceil(8)];
        let memory = Memory { base: buf.as_mut_ptr() as *mut u8, bytes };
        // The fill everywhere, then the operand in its place.
        let fill = Prog::new(
            vec![],
            vec![
                Node::Const(Constant { dtype: Dtype::Float64, lo: self.fill.to_bits(), hi: 0 }),
                Node::Cast(d, 0),
            ],
            vec![1],
        )?;
        map::plan(fill, vec![View::new(whole.clone(), memory)?], vec![])?.run()?;
        // Axes held at one element are read once: the operand steps 0 there.
        let once = |a: usize, n: usize| if self.held(v, a) { 1 } else { n };
        let inner = Layout {
            dtype: d,
            shape: (0..r).map(|a| once(a, v.layout.shape[a])).collect(),
            strides: whole.strides.clone(),
            offset: (0..r).map(|a| self.before[a] * whole.strides[a] as usize).sum(),
        };
        let mut operand = v.clone();
        operand.layout.shape = inner.shape.clone();
        let id = Prog::new(vec![d], vec![Node::Load(0)], vec![0])?;
        map::plan(id, vec![View::new(inner, memory)?], vec![operand])?.run()?;
        // The windows: a view of the copy.
        let mut shape = Vec::with_capacity(2 * r);
        let mut strides = Vec::with_capacity(2 * r);
        let mut taps = (Vec::new(), Vec::new());
        for (a, &extent) in copy_shape.iter().enumerate() {
            let s = if self.held(v, a) { 0 } else { whole.strides[a] };
            match self.windows.get(a).copied().flatten() {
                None => {
                    shape.push(extent.max(v.layout.shape[a]));
                    strides.push(s);
                }
                Some(w) => {
                    let span = (w.size - 1) * w.dilation + 1;
                    shape.push((extent - span) / w.stride + 1);
                    strides.push(s * w.stride as isize);
                    taps.0.push(w.size);
                    taps.1.push(s * w.dilation as isize);
                }
            }
        }
        shape.extend(taps.0);
        strides.extend(taps.1);
        let view = View::new(Layout { dtype: d, shape, strides, offset: 0 }, memory)?;
        Ok((view, buf))
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
