//! A contraction's axes: the pairs checked against the operands' shapes,
//! the destination's shape (`Nx_kernel.Shape.contract`), and the element
//! offsets of each operand along its batch, free and contracted axes.

/// Which axes of `a` and `b` a contraction pairs: `batch` and `contracting`
/// pairs (axis of a, axis of b).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pairs {
    /// Axes both operands run along together, each a batch axis of dst.
    pub batch: Vec<(usize, usize)>,
    /// Axes summed over; their products are numbered in C order of these
    /// pairs, the first pair's axis slowest.
    pub contracting: Vec<(usize, usize)>,
}

/// The axes of one operand in the roles a contraction gives them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Roles {
    /// Its batch axes, in the order of the batch pairs.
    pub batch: Vec<usize>,
    /// Its free axes, in increasing order: a's are dst's rows, b's its columns.
    pub free: Vec<usize>,
    /// Its contracted axes, in the order of the contracting pairs.
    pub depth: Vec<usize>,
}

impl Pairs {
    /// Checks the pairs against `a`'s and `b`'s shapes: every axis in its
    /// operand's rank, no axis of an operand named twice, the two extents
    /// of each pair equal. Gives the roles of `a`'s axes and of `b`'s.
    pub fn roles(&self, a: &[usize], b: &[usize]) -> Result<(Roles, Roles), String> {
        let side = |shape: &[usize], pick: fn(&(usize, usize)) -> usize, name: &str| -> Result<Roles, String> {
            let mut seen = vec![false; shape.len()];
            let mut take = |pairs: &[(usize, usize)], what: &str| -> Result<Vec<usize>, String> {
                pairs
                    .iter()
                    .map(|p| {
                        let ax = pick(p);
                        match seen.get_mut(ax) {
                            None => Err(format!("{what} axis {ax} of {name} is not below its rank {}", shape.len())),
                            Some(true) => Err(format!("axis {ax} of {name} is paired twice")),
                            Some(s) => {
                                *s = true;
                                Ok(ax)
                            }
                        }
                    })
                    .collect()
            };
            let batch = take(&self.batch, "batch")?;
            let depth = take(&self.contracting, "contracting")?;
            let free = (0..shape.len()).filter(|&i| !seen[i]).collect();
            Ok(Roles { batch, free, depth })
        };
        let ra = side(a, |p| p.0, "a")?;
        let rb = side(b, |p| p.1, "b")?;
        for (what, pairs) in [("batch", &self.batch), ("contracting", &self.contracting)] {
            for &(x, y) in pairs {
                if a[x] != b[y] {
                    return Err(format!("{what} pair ({x}, {y}) joins extents {} and {}", a[x], b[y]));
                }
            }
        }
        Ok((ra, rb))
    }

    /// The shape of the contraction's dst (`Nx_kernel.Shape.contract`): the
    /// batch pairs' extents in their order, then `a`'s free axes, then
    /// `b`'s, each in increasing order.
    pub fn dst_shape(&self, a: &[usize], b: &[usize]) -> Result<Vec<usize>, String> {
        let (ra, rb) = self.roles(a, b)?;
        Ok(ra.batch.iter().map(|&x| a[x]).chain(ra.free.iter().map(|&x| a[x])).chain(rb.free.iter().map(|&x| b[x])).collect())
    }
}

/// The product of `shape`'s extents along `axes`.
pub fn extent(shape: &[usize], axes: &[usize]) -> usize {
    axes.iter().map(|&x| shape[x]).product()
}

/// The element offsets of every index along `axes` (of `shape` and
/// `strides`), in C order of those axes, from `base`. Refused where they
/// cannot be allocated.
pub fn offsets(shape: &[usize], strides: &[isize], axes: &[usize], base: isize) -> Result<Vec<isize>, String> {
    blocked_offsets(shape, strides, None, axes, base)
}

/// As [`offsets`], but where `blocks` gives each axis's block extent, the
/// offset of index i along an axis is that of its block, i / block: the
/// offsets, in an array of blocks of `strides`, of the scales of an
/// operand of `shape`.
pub fn blocked_offsets(shape: &[usize], strides: &[isize], blocks: Option<&[usize]>, axes: &[usize], base: isize) -> Result<Vec<isize>, String> {
    let n = extent(shape, axes);
    let mut out = Vec::new();
    out.try_reserve_exact(n).map_err(|_| format!("the offsets of {n} indices cannot be allocated"))?;
    if n == 0 {
        return Ok(out);
    }
    out.push(base);
    for &ax in axes.iter().rev() {
        // Each axis, from the innermost out, repeats what is built so far at
        // each of its indices; the earlier axes vary slowest.
        let (now, blk, first) = (out.len(), blocks.map_or(1, |b| b[ax]), out[0]);
        if now == 1 {
            // (No division where each index is its own block.)
            match blk {
                1 => out.extend((1..shape[ax] as isize).map(|i| first + i * strides[ax])),
                _ => out.extend((1..shape[ax]).map(|i| first + (i / blk) as isize * strides[ax])),
            }
            continue;
        }
        for i in 1..shape[ax] {
            let step = (i / blk) as isize * strides[ax];
            out.extend_from_within(..now);
            let at = out.len() - now;
            for x in &mut out[at..] {
                *x += step;
            }
        }
    }
    Ok(out)
}

/// The common step of `offs` where they are `offs[0] + i * step`; `None`
/// where they are not. One offset or none steps by 0.
pub fn uniform(offs: &[isize]) -> Option<isize> {
    let step = if offs.len() > 1 { offs[1] - offs[0] } else { 0 };
    offs.windows(2).all(|w| w[1] - w[0] == step).then_some(step)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_run_in_c_order_of_the_axes_given() {
        // shape [2, 3, 4], strides of C order: axes [2, 0] vary 2 slowest.
        let o = offsets(&[2, 3, 4], &[12, 4, 1], &[2, 0], 5).unwrap();
        assert_eq!(o, vec![5, 17, 6, 18, 7, 19, 8, 20]);
        assert_eq!(offsets(&[2, 0], &[1, 1], &[0, 1], 0).unwrap(), Vec::<isize>::new());
        assert_eq!(offsets(&[2, 3], &[1, 1], &[], 7).unwrap(), vec![7]);
        assert_eq!(uniform(&[3, 1, -1]), Some(-2));
        assert_eq!(uniform(&[3, 1, 0]), None);
        assert_eq!(uniform(&[3]), Some(0));
    }

    #[test]
    fn roles_and_shapes_and_their_refusals() {
        let p = Pairs { batch: vec![(0, 1)], contracting: vec![(2, 0)] };
        let (ra, rb) = p.roles(&[5, 2, 3], &[3, 5, 7]).unwrap();
        assert_eq!(ra, Roles { batch: vec![0], free: vec![1], depth: vec![2] });
        assert_eq!(rb, Roles { batch: vec![1], free: vec![2], depth: vec![0] });
        assert_eq!(p.dst_shape(&[5, 2, 3], &[3, 5, 7]).unwrap(), vec![5, 2, 7]);
        assert!(p.roles(&[5, 2, 4], &[3, 5, 7]).unwrap_err().contains("extents"));
        assert!(p.roles(&[5, 2], &[3, 5, 7]).unwrap_err().contains("rank"));
        let twice = Pairs { batch: vec![(0, 0)], contracting: vec![(0, 1)] };
        assert!(twice.roles(&[3, 3], &[3, 3]).unwrap_err().contains("twice"));
    }
}
