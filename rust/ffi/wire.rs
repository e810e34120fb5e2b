//! The words a call is described in on the boundary: little-endian 64-bit
//! words for programs (`crate::loops::prog`), views, pads and reductions, each
//! decoded and checked here before any kernel sees it, so that no
//! description can make a kernel touch memory outside a buffer.

use crate::core::dtype::Dtype;
use crate::core::layout::{Memory, View, Layout};
use crate::loops::map;
use crate::loops::pad::{Pad, Window};
use crate::loops::reduce_loop;

/// Reads little-endian 64-bit words.
pub fn words(b: &[u8]) -> Result<Vec<i64>, String> {
    if !b.len().is_multiple_of(8) {
        return Err("a call description of a partial word".into());
    }
    Ok(b.chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes"))).collect())
}

/// Reads a call description's words in order, refusing one that ends early.
pub struct Reader<'a> {
    words: &'a [i64],
    at: usize,
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub fn new(words: &'a [i64], what: &'static str) -> Self {
        Reader { words, at: 0, what }
    }

    pub fn word(&mut self) -> Result<i64, String> {
        let x = *self.words.get(self.at).ok_or_else(|| format!("a {} description ends early", self.what))?;
        self.at += 1;
        Ok(x)
    }

    /// A word that counts something, so is not negative.
    pub fn count(&mut self, name: &str) -> Result<usize, String> {
        let x = self.word()?;
        usize::try_from(x).map_err(|_| format!("a {}'s {name} is {x}", self.what))
    }

    pub fn counts(&mut self, n: usize, name: &str) -> Result<Vec<usize>, String> {
        (0..n).map(|_| self.count(name)).collect()
    }

    pub fn finish(self) -> Result<(), String> {
        if self.at == self.words.len() { Ok(()) } else { Err(format!("a {} description has words past its end", self.what)) }
    }
}

/// Decodes every view of the words: dtype, buffer, rank, offset, shape,
/// strides; each checked to lie inside its buffer.
pub fn views(w: &[i64], mems: &[Memory]) -> Result<Vec<View>, String> {
    let mut r = Reader::new(w, "view");
    // A view takes at least 4 words.
    let mut out = Vec::with_capacity(w.len() / 4);
    for i in 0.. {
        if r.at == w.len() {
            break;
        }
        let code = r.word()?;
        let dtype = Dtype::of_code(code).ok_or_else(|| format!("operand {i} has no dtype of code {code}"))?;
        let buf = r.count("buffer")?;
        let mem = mems.get(buf).ok_or_else(|| format!("operand {i} names buffer {buf}"))?;
        let rank = r.count("rank")?;
        let offset = r.count("offset")?;
        let shape = r.counts(rank, "extent")?;
        let strides = (0..rank).map(|_| r.word().map(|s| s as isize)).collect::<Result<Vec<_>, _>>()?;
        let layout = Layout { dtype, shape, strides, offset };
        out.push(View::new(layout, *mem).map_err(|e| format!("operand {i} {e}"))?);
    }
    r.finish()?;
    Ok(out)
}

/// The buffer each view of checked view words (as [`views`] took them)
/// names, in order.
pub fn view_buffers(w: &[i64]) -> Vec<usize> {
    let mut out = Vec::with_capacity(w.len() / 4);
    let mut at = 0;
    while at + 4 <= w.len() {
        out.push(w[at + 1] as usize);
        at += 4 + 2 * w[at + 2] as usize;
    }
    out
}

/// Decodes every load's pad from words: 0 for a plain load; or 1, the
/// befores' count and befores, the afters' count and afters, the windows'
/// count, three words per window (size, stride, dilation; all 0 for an axis
/// without), the fill's bits. `Pad::shape` checks the counts against the
/// operand's rank.
pub fn pads(w: &[i64]) -> Result<Vec<Option<Pad>>, String> {
    let mut r = Reader::new(w, "pad");
    let mut out = Vec::new();
    while r.at < w.len() {
        if r.count("tag")? == 0 {
            out.push(None);
            continue;
        }
        let nb = r.count("before count")?;
        let before = r.counts(nb, "before")?;
        let na = r.count("after count")?;
        let after = r.counts(na, "after")?;
        let n = r.count("window count")?;
        let mut windows = Vec::with_capacity(n.min(64));
        for _ in 0..n {
            let (size, stride, dilation) = (r.count("window")?, r.count("stride")?, r.count("dilation")?);
            windows.push(if size == 0 { None } else { Some(Window { size, stride, dilation }) });
        }
        let fill = f64::from_bits(r.word()? as u64);
        out.push(Some(Pad { before, after, windows, fill }));
    }
    r.finish()?;
    Ok(out)
}

/// The loads of a call: its operands' views with their pads, one each.
pub fn loads(views: Vec<View>, pads: Vec<Option<Pad>>) -> Result<Vec<map::Load>, String> {
    if views.len() != pads.len() {
        return Err(format!("{} operands but {} pads", views.len(), pads.len()));
    }
    Ok(views
        .into_iter()
        .zip(pads)
        .map(|(v, p)| match p {
            None => map::Load::Plain(v),
            Some(p) => map::Load::Padded(p, v),
        })
        .collect())
}

/// A reduction's code: Sum, Prod, Max, Min 0 to 3; Arg of Max or Min 4, 5;
/// Logsumexp 6; Moments 7.
pub fn reduction_of(code: i64) -> Result<reduce_loop::Reduction, String> {
    use reduce_loop::{Monoidal::*, Reduction::*};
    Ok(match code {
        0 => Monoid(Sum),
        1 => Monoid(Prod),
        2 => Monoid(Max),
        3 => Monoid(Min),
        4 => Arg(Max),
        5 => Arg(Min),
        6 => Logsumexp,
        7 => Moments,
        c => return Err(format!("no reduction has code {c}")),
    })
}


#[cfg(test)]
mod tests {
    use super::*;

    fn le(ws: &[i64]) -> Vec<u8> {
        ws.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn words_round_trip_and_refuse_partial_ones() {
        assert_eq!(words(&le(&[1, -2, i64::MAX])).unwrap(), vec![1, -2, i64::MAX]);
        assert!(words(&[0u8; 7]).is_err());
    }

    #[test]
    fn views_that_leave_their_buffer_or_lie_are_refused() {
        let mut buf = [0u64; 4];
        let mems = [Memory { base: buf.as_mut_ptr() as *mut u8, bytes: 32 }];
        // float32 [8] at offset 0: fits.
        assert_eq!(views(&[17, 0, 1, 0, 8, 1], &mems).unwrap().len(), 1);
        let bad: [&[i64]; 9] = [
            &[17, 0, 1, 0, 9, 1],            // one element past the end
            &[17, 0, 1, 1, 8, 1],            // offset pushes it out
            &[17, 0, 1, 6, 8, -1],           // negative stride reaches before 0
            &[17, 1, 1, 0, 8, 1],            // no buffer 1
            &[99, 0, 1, 0, 8, 1],            // no dtype 99
            &[17, 0, -1, 0],                 // negative rank
            &[17, 0, 1, 0, -8, 1],           // negative extent
            &[17, 0, 2, 0, 8],               // ends early
            &[17, 0, 1, 0, i64::MAX, i64::MAX], // reach overflows
        ];
        for w in bad {
            assert!(views(w, &mems).is_err(), "{w:?}");
        }
        assert!(views(&[17, 0, 1, 0, 8, 1, 0], &mems).is_err(), "a partial view");
        // A broadcast view of 2^64 elements of one float fits no index count.
        assert!(views(&[17, 0, 2, 0, 1 << 32, 1 << 32, 0, 0], &mems).is_err());
    }

    #[test]
    fn pads_decode_and_refuse_malformed_ones() {
        let p = pads(&[0, 1, 1, 2, 1, 3, 1, 3, 1, 2, 0f64.to_bits() as i64]).unwrap();
        assert_eq!(p[0], None);
        let pad = p[1].clone().unwrap();
        assert_eq!((pad.before, pad.after), (vec![2], vec![3]));
        assert_eq!(pad.windows, vec![Some(Window { size: 3, stride: 1, dilation: 2 })]);
        assert!(pads(&[1, 1, -2, 1, 3, 0, 0]).is_err());
        assert!(pads(&[1, 1, 2]).is_err());
        assert_eq!(pads(&[0, 0]).unwrap(), vec![None, None]);
    }

    #[test]
    fn reduction_codes() {
        assert_eq!(reduction_of(7), Ok(reduce_loop::Reduction::Moments));
        assert!(reduction_of(8).is_err() && reduction_of(-1).is_err());
    }
}
