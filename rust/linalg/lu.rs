//! lu: P a = L U by partial pivoting, L unit lower triangular, U upper.
//!
//! Each element is its element of a less the products of its row's L and
//! its column's U before it, in increasing order, each fused
//! ([`Scalar::sub_mul`]); an element of L is then divided by its pivot. Rows
//! move whole as they are interchanged, so the chain is the same whatever
//! the blocking.

use crate::linalg::scalar::Scalar;
use crate::linalg::update;

/// Factors the m × n column-major matrix `w` in place into L below its
/// diagonal and U on and above, storing in `pivots` (min(m, n) of them) the
/// row each step's search ends at and in `perm` (m) the row of a each row of
/// L U is.
pub fn factor<T: Scalar>(w: &mut [T], m: usize, n: usize, pivots: &mut [i64], perm: &mut [i64], par: bool) {
    let k = m.min(n);
    for (i, p) in perm.iter_mut().enumerate().take(m) {
        *p = i as i64;
    }
    let nb = update::BLOCK;
    let mut j0 = 0;
    while j0 < k {
        let j1 = (j0 + nb).min(k);
        for j in j0..j1 {
            // Column j less the products of the panel's earlier columns.
            for kk in j0..j {
                let f = [w[kk + j * m]];
                let (head, tail) = w.split_at_mut(j * m);
                update::column(&mut tail[..m], kk + 1..m, &head[kk * m..], m, &f);
            }
            let mut p = j;
            let mut best = w[j + j * m].abs1();
            for i in j + 1..m {
                let x = w[i + j * m].abs1();
                if x > best {
                    p = i;
                    best = x;
                }
            }
            pivots[j] = p as i64;
            if p != j {
                perm.swap(j, p);
                for c in 0..n {
                    w.swap(j + c * m, p + c * m);
                }
            }
            let d = w[j + j * m];
            if !d.is_zero() {
                for i in j + 1..m {
                    w[i + j * m] = T::div(w[i + j * m], d);
                }
            }
        }
        // The columns after the panel: U's rows j0..j1, then the rows below
        // less the panel's products.
        if j1 < n {
            let (head, tail) = w.split_at_mut(j1 * m);
            let head = &*head;
            let work = (m - j0) * (n - j1) * (j1 - j0);
            update::each_group(tail, m, par, work, |_, group| {
                let g = group.len() / m;
                let kn = j1 - j0;
                let mut f = [T::zero(); update::BLOCK * update::GROUP];
                for (c, col) in group.chunks_mut(m).enumerate() {
                    for kk in j0..j1 {
                        let fk = [col[kk]];
                        update::column(col, kk + 1..j1, &head[kk * m..], m, &fk);
                    }
                    f[c * kn..(c + 1) * kn].copy_from_slice(&col[j0..j1]);
                }
                update::columns(group, m, j1..m, &head[j0 * m..], m, &f[..g * kn], kn);
            });
        }
        j0 = j1;
    }
}
