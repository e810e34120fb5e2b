//! The copy a padded load reads: its operand padded and filled in host
//! memory the call holds, by two maps, and the windows a view of it. Here
//! rather than in [`crate::loops::pad`], which describes pads alone, so that
//! the loops' modules import each other in one direction.

use crate::core::call::Call;
use crate::core::dtype::Dtype;
use crate::core::layout::{Layout, Memory, View};
use crate::loops::map;
use crate::loops::pad::Pad;
use crate::loops::prog::{Constant, Node, Prog};

impl Pad {
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
